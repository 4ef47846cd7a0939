//! The job pages' server functions: queue, list, one job, its log,
//! submit, cancel, and the workspaces the submit form offers.

use crate::model::error::ConsoleError;
use crate::model::views::{self, JobPage, LogChunk, WorkspaceView};
use leptos::prelude::*;

/// The queue page's data: the queue, and each pending reason in it in the
/// reader's language (the island that shows it carries no messages).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QueueScreen {
    pub queue: views::QueueView,
    /// (reason, its words); a list, not a map: smaller in the wasm.
    pub reasons: Vec<(String, String)>,
}

#[server]
pub async fn queue_view() -> Result<QueueScreen, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let queue = backend.queue(&who).await.map_err(answer)?;
    let locale = crate::i18n::locale();
    let reasons = queue
        .jobs
        .iter()
        .chain(&queue.user_queue)
        .filter_map(|e| e.pending_reason.clone())
        .map(|r| (r.clone(), crate::model::reasons::reason_text(locale, &r)))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    Ok(QueueScreen { queue, reasons })
}

#[server]
pub async fn jobs_page(
    state: Option<String>,
    before: Option<i64>,
    array: Option<i64>,
) -> Result<JobPage, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.jobs(&who, state, before, array).await.map_err(answer)
}

#[server]
pub async fn job_detail(id: i64) -> Result<views::JobDetail, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.job(&who, id).await.map_err(answer)
}

#[server]
pub async fn job_log(id: i64, offset: u64) -> Result<LogChunk, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.job_log(&who, id, offset).await.map_err(answer)
}

/// The log's last 64 KiB before `end` (None: its end now).
#[server]
pub async fn job_log_tail(id: i64, end: Option<u64>) -> Result<LogChunk, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.job_log_tail(&who, id, end).await.map_err(answer)
}

/// Submits, then sends the browser to the new job's page (an array's
/// list for an array).
#[server]
#[allow(clippy::too_many_arguments)]
pub async fn submit_job(
    name: String,
    command: String,
    num_gpus: String,
    time_limit_minutes: String,
    env: String,
    workspace: Option<String>,
    min_vram_gb: Option<String>,
    after: Option<String>,
    array: Option<String>,
) -> Result<String, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let form = crate::model::views::SubmitForm {
        name,
        command,
        num_gpus,
        time_limit_minutes,
        env,
        workspace: workspace.unwrap_or_default(),
        min_vram_gb: min_vram_gb.unwrap_or_default(),
        after: after.unwrap_or_default(),
        array: array.unwrap_or_default(),
    };
    let to = match backend.submit(&who, form).await.map_err(answer)? {
        crate::model::Submitted::Job(job) => format!("/jobs/{}", job.id),
        crate::model::Submitted::Array(a) => format!("/jobs?array={}", a.array_id),
    };
    leptos_axum::redirect(&to);
    Ok(to)
}

/// The viewer's lab's workspaces (the submit form offers the READY ones).
#[server]
pub async fn my_workspaces() -> Result<Vec<WorkspaceView>, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.workspaces(&who).await.map_err(answer)
}

/// Cancels every unfinished element; answers how many are left unfinished
/// (cancelling ones included).
#[server]
pub async fn cancel_array(id: i64) -> Result<usize, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let array = backend.cancel_array(&who, id).await.map_err(answer)?;
    Ok(array.jobs.iter().filter(|j| j.state == crate::model::JobState::Cancelling).count())
}

#[server]
pub async fn cancel_job(id: i64) -> Result<String, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let job = backend.cancel(&who, id).await.map_err(answer)?;
    Ok(job.state.as_str().to_string())
}

/// The apps "Start a notebook" offers.
#[server]
pub async fn session_apps() -> Result<Vec<String>, ConsoleError> {
    use crate::api::backend::*;
    let (backend, _) = signed_in().await?;
    Ok(backend.session_apps())
}

/// Starts an interactive session, then sends the browser to its page
/// (which opens the app once it is ready).
#[server]
pub async fn start_session(
    app: String,
    num_gpus: String,
    time_limit_minutes: String,
    workspace: Option<String>,
) -> Result<String, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    let form =
        crate::model::SessionForm { app, num_gpus, time_limit_minutes, workspace: workspace.unwrap_or_default() };
    let to = format!("/jobs/{}", backend.start_session(&who, form).await.map_err(answer)?.id);
    leptos_axum::redirect(&to);
    Ok(to)
}
