//! The seam between the console's server functions and the server crate.
//!
//! This crate cannot depend on `server` (the server depends on it), so the
//! server implements [`ConsoleBackend`] on its state and hands it to Leptos
//! as context. Its middleware resolves who is calling once per request and
//! leaves a [`SignedIn`] in the request: the viewer pages may see, and the
//! server's own record of the caller ([`Caller`], typed). Server functions stay
//! thin: [`signed_in`], one backend call, [`answer`] the error.

use std::sync::Arc;

use crate::api::principal::Caller;
use crate::model::admin::{AdminAction, AdminClusterView};
use crate::model::error::ConsoleError;
use crate::model::views::{
    AdminView, DashboardView, JobDetail, JobPage, LogChunk, PersonalToken, QueueView, SubmitForm, TokenView, UsagePage,
    WorkspaceView,
};
use crate::model::{JobView, MaintenanceView, Viewer};

/// Who is calling: what the console shows of them, and the server's
/// record of them (only the backend reads it).
#[derive(Clone)]
pub struct SignedIn {
    pub viewer: Viewer,
    pub principal: Arc<Caller>,
}

type Answer<T> = Result<T, ConsoleError>;

#[async_trait::async_trait]
pub trait ConsoleBackend: Send + Sync + 'static {
    async fn dashboard(&self, who: &SignedIn) -> Answer<DashboardView>;
    async fn maintenance(&self) -> Answer<MaintenanceView>;
    async fn queue(&self, who: &SignedIn) -> Answer<QueueView>;
    async fn jobs(
        &self,
        who: &SignedIn,
        state: Option<String>,
        before: Option<i64>,
        array: Option<i64>,
    ) -> Answer<JobPage>;
    async fn job(&self, who: &SignedIn, id: i64) -> Answer<JobDetail>;
    async fn job_log(&self, who: &SignedIn, id: i64, offset: u64) -> Answer<LogChunk>;
    /// The log's last 64 KiB before `end` (None = its end now).
    async fn job_log_tail(&self, who: &SignedIn, id: i64, end: Option<u64>) -> Answer<LogChunk>;
    async fn submit(&self, who: &SignedIn, form: SubmitForm) -> Answer<crate::model::Submitted>;
    async fn cancel(&self, who: &SignedIn, id: i64) -> Answer<JobView>;
    /// The apps a session may run (`[sessions.apps]`), by name.
    fn session_apps(&self) -> Vec<String>;
    async fn start_session(&self, who: &SignedIn, form: crate::model::SessionForm) -> Answer<JobView>;
    async fn cancel_array(&self, who: &SignedIn, id: i64) -> Answer<crate::model::ArrayJobs>;
    /// The viewer's lab's workspaces.
    async fn workspaces(&self, who: &SignedIn) -> Answer<Vec<WorkspaceView>>;
    /// `lab` = whose 30 days to chart (default: the viewer's).
    async fn usage(&self, who: &SignedIn, lab: Option<String>) -> Answer<UsagePage>;
    async fn notifications(&self, who: &SignedIn) -> Answer<crate::model::views::NotificationSettings>;
    async fn save_notifications(
        &self,
        who: &SignedIn,
        form: crate::model::views::NotificationSettings,
    ) -> Answer<crate::model::views::NotificationSettings>;
    async fn deliveries(&self, who: &SignedIn) -> Answer<crate::model::views::Deliveries>;
    /// A month's (`YYYY-MM`; None = this month) usage report by `by`.
    async fn usage_report(
        &self,
        who: &SignedIn,
        month: Option<String>,
        by: String,
    ) -> Answer<crate::model::views::UsageReport>;
    async fn change_password(&self, who: &SignedIn, current: String, new: String) -> Answer<()>;
    async fn tokens(&self, who: &SignedIn) -> Answer<Vec<TokenView>>;
    /// The viewer's home and lab share against their quotas.
    async fn storage(&self, who: &SignedIn) -> Answer<crate::model::storage::StorageView>;
    async fn create_token(&self, who: &SignedIn, name: String, expires_in_days: Option<i64>) -> Answer<PersonalToken>;
    /// The Policy page's facts; anyone may ask (the viewer's own limits
    /// when signed in).
    async fn policy(&self, who: Option<&SignedIn>) -> Answer<crate::model::policy::PolicyView>;
    /// For the sign-in page; anyone may ask.
    fn sign_in_options(&self) -> crate::model::views::SignInOptions;
    async fn revoke_token(&self, who: &SignedIn, id: i64) -> Answer<()>;
    /// Why the executor (e.g. Slurm) cannot be reached, if it cannot.
    async fn executor_problem(&self) -> Option<String>;
    /// Admins only (else FORBIDDEN).
    async fn admin_view(&self, who: &SignedIn) -> Answer<AdminView>;
    /// `start` (with a message) or `end`; admins only.
    async fn set_maintenance(&self, who: &SignedIn, action: String, message: String) -> Answer<MaintenanceView>;
    /// Tiers, nodes, labs, users and backfill; admins only.
    async fn admin_cluster(&self, who: &SignedIn) -> Answer<AdminClusterView>;
    /// One admin change; admins only. Returns what was done, in words.
    async fn admin_action(&self, who: &SignedIn, action: AdminAction) -> Answer<String>;
    /// A folder of the viewer's home or lab share, or of a dataset open
    /// to their lab (`place` = `datasets`, the dataset first in `path`).
    async fn folder(
        &self,
        who: &SignedIn,
        place: String,
        path: String,
    ) -> Answer<crate::model::datasets::FolderListing>;
    async fn datasets_page(&self, who: &SignedIn) -> Answer<crate::model::datasets::DatasetsView>;
}

/// The backend as Leptos context.
#[derive(Clone)]
pub struct Backend(pub Arc<dyn ConsoleBackend>);

/// Who made the current request; inserted into request extensions by the
/// server's auth middleware (None = anonymous).
#[derive(Clone, Default)]
pub struct CurrentViewer(pub Option<SignedIn>);

/// The backend from context (an internal error if the server forgot it).
pub fn backend() -> Answer<Arc<dyn ConsoleBackend>> {
    leptos::prelude::use_context::<Backend>()
        .map(|b| b.0)
        .ok_or_else(|| answer(ConsoleError::new(crate::model::error::ErrorCode::Internal, "console backend missing")))
}

/// The caller of this request, if signed in.
pub async fn current_caller() -> Answer<Option<SignedIn>> {
    let axum::Extension(CurrentViewer(who)) = leptos_axum::extract::<axum::Extension<CurrentViewer>>().await?;
    Ok(who)
}

/// The backend and the signed-in caller, or UNAUTHENTICATED.
pub async fn signed_in() -> Answer<(Arc<dyn ConsoleBackend>, SignedIn)> {
    let who = current_caller().await?.ok_or_else(|| answer(ConsoleError::unauthenticated()))?;
    Ok((backend()?, who))
}

/// A server function's error, with the HTTP status of its api.md code set
/// on the response: the user's mistakes are 4xx (a 500 would be logged as
/// the server's fault), only INTERNAL is 500.
pub fn answer(e: ConsoleError) -> ConsoleError {
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        if let Ok(status) = axum::http::StatusCode::from_u16(e.code.status()) {
            response.set_status(status);
        }
    }
    e
}
