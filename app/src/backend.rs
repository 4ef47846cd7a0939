//! The seam between the console's server functions and the server crate.
//!
//! This crate cannot depend on `server` (the server depends on it), so the
//! server implements [`ConsoleBackend`] on its `AppState` and hands it to
//! Leptos as context. Server functions stay thin: fetch the backend and the
//! viewer, call one method, map the error.

use crate::model::{DashboardView, JobView, MaintenanceView, Viewer};
use crate::views::{AdminView, JobDetail, JobPage, LogChunk, NewToken, QueueView, SubmitForm, TokenView, UsagePage};
use std::sync::Arc;

/// Failures the console can show. Internal details stay in the server log.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error("please sign in")]
    Unauthenticated,
    #[error("this page is for admins")]
    Forbidden,
    #[error("no such job")]
    NotFound,
    /// A mistake of the user's, shown as is (e.g. a field out of range).
    #[error("{0}")]
    Invalid(String),
    #[error("internal error")]
    Internal,
}

#[async_trait::async_trait]
pub trait ConsoleBackend: Send + Sync + 'static {
    async fn dashboard(&self, viewer: &Viewer) -> Result<DashboardView, ConsoleError>;
    async fn maintenance(&self) -> Result<MaintenanceView, ConsoleError>;
    async fn queue(&self, viewer: &Viewer) -> Result<QueueView, ConsoleError>;
    async fn jobs(&self, viewer: &Viewer, state: Option<String>, before: Option<i64>) -> Result<JobPage, ConsoleError>;
    async fn job(&self, viewer: &Viewer, id: i64) -> Result<JobDetail, ConsoleError>;
    async fn job_log(&self, viewer: &Viewer, id: i64, offset: u64) -> Result<LogChunk, ConsoleError>;
    /// The log's last 64 KiB before `end` (None = its end now).
    async fn job_log_tail(&self, viewer: &Viewer, id: i64, end: Option<u64>) -> Result<LogChunk, ConsoleError>;
    async fn submit(&self, viewer: &Viewer, form: SubmitForm) -> Result<JobView, ConsoleError>;
    async fn cancel(&self, viewer: &Viewer, id: i64) -> Result<JobView, ConsoleError>;
    /// The viewer's lab's workspaces.
    async fn workspaces(&self, viewer: &Viewer) -> Result<Vec<crate::views::WorkspaceView>, ConsoleError>;
    /// `lab` = whose 30 days to chart (default: the viewer's).
    async fn usage(&self, viewer: &Viewer, lab: Option<String>) -> Result<UsagePage, ConsoleError>;
    async fn change_password(&self, viewer: &Viewer, current: String, new: String) -> Result<(), ConsoleError>;
    async fn tokens(&self, viewer: &Viewer) -> Result<Vec<TokenView>, ConsoleError>;
    async fn create_token(&self, viewer: &Viewer, label: String) -> Result<NewToken, ConsoleError>;
    async fn revoke_token(&self, viewer: &Viewer, id: i64) -> Result<(), ConsoleError>;
    /// Why the executor (e.g. Slurm) cannot be reached, if it cannot.
    async fn executor_problem(&self) -> Option<String>;
    /// Admins only (else `Forbidden`).
    async fn admin_view(&self, viewer: &Viewer) -> Result<AdminView, ConsoleError>;
    /// `start` (with a message) or `end`; admins only.
    async fn set_maintenance(
        &self,
        viewer: &Viewer,
        action: String,
        message: String,
    ) -> Result<MaintenanceView, ConsoleError>;
    /// Tiers, nodes, labs, users and backfill; admins only.
    async fn admin_cluster(&self, viewer: &Viewer) -> Result<crate::admin_views::AdminClusterView, ConsoleError>;
    /// One admin change; admins only. Returns what was done, in words.
    async fn admin_action(
        &self,
        viewer: &Viewer,
        action: crate::admin_views::AdminAction,
    ) -> Result<String, ConsoleError>;
}

/// The backend as Leptos context.
#[derive(Clone)]
pub struct Backend(pub Arc<dyn ConsoleBackend>);

/// Who made the current request; inserted into request extensions by the
/// server's auth middleware (None = anonymous).
#[derive(Debug, Clone, Default)]
pub struct CurrentViewer(pub Option<Viewer>);

/// The backend from context, or a server error if the server forgot it.
pub fn backend() -> Result<Backend, leptos::prelude::ServerFnError> {
    leptos::prelude::use_context::<Backend>()
        .ok_or_else(|| leptos::prelude::ServerFnError::new("console backend missing"))
}

/// The signed-in viewer of this request, if any.
pub async fn current_viewer() -> Result<Option<Viewer>, leptos::prelude::ServerFnError> {
    let axum::Extension(CurrentViewer(viewer)) = leptos_axum::extract::<axum::Extension<CurrentViewer>>().await?;
    Ok(viewer)
}

/// The error a server function answers with, and its HTTP status: the
/// user's mistakes are 4xx (a 500 would be logged as the server's fault),
/// only `Internal` is 500.
pub fn to_server_error(e: ConsoleError) -> leptos::prelude::ServerFnError {
    use axum::http::StatusCode;
    let status = match &e {
        ConsoleError::Unauthenticated => StatusCode::UNAUTHORIZED,
        ConsoleError::Forbidden => StatusCode::FORBIDDEN,
        ConsoleError::NotFound => StatusCode::NOT_FOUND,
        ConsoleError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
        ConsoleError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    };
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(status);
    }
    leptos::prelude::ServerFnError::new(e.to_string())
}
