//! Server functions used by the console. Each one: get the backend and
//! viewer, call one backend method, map the error.

use crate::model::{DashboardView, MaintenanceView, Viewer};
use leptos::prelude::*;

#[server]
pub async fn whoami() -> Result<Option<Viewer>, ServerFnError> {
    crate::backend::current_viewer().await
}

#[server]
pub async fn maintenance_status() -> Result<MaintenanceView, ServerFnError> {
    use crate::backend::*;
    backend()?.0.maintenance().await.map_err(to_server_error)
}

#[server]
pub async fn dashboard() -> Result<DashboardView, ServerFnError> {
    use crate::backend::*;
    let viewer = current_viewer().await?.ok_or_else(|| to_server_error(ConsoleError::Unauthenticated))?;
    backend()?.0.dashboard(&viewer).await.map_err(to_server_error)
}

/// The viewer or an "please sign in" error.
#[cfg(feature = "ssr")]
async fn signed_in() -> Result<Viewer, ServerFnError> {
    use crate::backend::*;
    current_viewer().await?.ok_or_else(|| to_server_error(ConsoleError::Unauthenticated))
}

#[server]
pub async fn queue_view() -> Result<crate::views::QueueView, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.queue(&viewer).await.map_err(to_server_error)
}

#[server]
pub async fn jobs_page(state: Option<String>, before: Option<i64>) -> Result<crate::views::JobPage, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.jobs(&viewer, state, before).await.map_err(to_server_error)
}

#[server]
pub async fn job_detail(id: i64) -> Result<crate::views::JobDetail, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.job(&viewer, id).await.map_err(to_server_error)
}

#[server]
pub async fn job_log(id: i64, offset: u64) -> Result<crate::views::LogChunk, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.job_log(&viewer, id, offset).await.map_err(to_server_error)
}

/// The log's last 64 KiB before `end` (None: its end now).
#[server]
pub async fn job_log_tail(id: i64, end: Option<u64>) -> Result<crate::views::LogChunk, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.job_log_tail(&viewer, id, end).await.map_err(to_server_error)
}

/// Submits, then sends the browser to the new job's page.
#[server]
pub async fn submit_job(
    name: String,
    command: String,
    num_gpus: String,
    time_limit_minutes: String,
    env: String,
    workspace: Option<String>,
) -> Result<i64, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    let workspace = workspace.unwrap_or_default();
    let form = crate::views::SubmitForm { name, command, num_gpus, time_limit_minutes, env, workspace };
    let job = backend()?.0.submit(&viewer, form).await.map_err(to_server_error)?;
    leptos_axum::redirect(&format!("/jobs/{}", job.id));
    Ok(job.id)
}

/// The viewer's lab's workspaces (the submit form offers the READY ones).
#[server]
pub async fn my_workspaces() -> Result<Vec<crate::views::WorkspaceView>, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.workspaces(&viewer).await.map_err(to_server_error)
}

#[server]
pub async fn cancel_job(id: i64) -> Result<String, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    let job = backend()?.0.cancel(&viewer, id).await.map_err(to_server_error)?;
    Ok(job.state.as_str().to_string())
}

/// A server function's error as the user should read it (without the
/// framework's "error running server function" prefix).
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(message) => message.clone(),
        other => other.to_string(),
    }
}

#[server]
pub async fn admin_view() -> Result<crate::views::AdminView, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.admin_view(&viewer).await.map_err(to_server_error)
}

#[server]
pub async fn set_maintenance(action: String, message: String) -> Result<MaintenanceView, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.set_maintenance(&viewer, action, message).await.map_err(to_server_error)
}

/// Why the cluster cannot be reached right now (signed-in users only).
#[server]
pub async fn cluster_problem() -> Result<Option<String>, ServerFnError> {
    use crate::backend::*;
    signed_in().await?;
    Ok(backend()?.0.executor_problem().await)
}

#[server]
pub async fn usage_page(lab: Option<String>) -> Result<crate::views::UsagePage, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.usage(&viewer, lab).await.map_err(to_server_error)
}

#[server]
pub async fn change_password(current: String, new: String) -> Result<(), ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.change_password(&viewer, current, new).await.map_err(to_server_error)
}

#[server]
pub async fn my_tokens() -> Result<Vec<crate::views::TokenView>, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.tokens(&viewer).await.map_err(to_server_error)
}

#[server]
pub async fn create_token(label: String) -> Result<crate::views::NewToken, ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.create_token(&viewer, label).await.map_err(to_server_error)
}

#[server]
pub async fn revoke_token(id: i64) -> Result<(), ServerFnError> {
    use crate::backend::*;
    let viewer = signed_in().await?;
    backend()?.0.revoke_token(&viewer, id).await.map_err(to_server_error)
}
