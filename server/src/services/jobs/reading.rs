//! Reading a job's output as its owner or an admin: the log from an
//! offset or its tail, the file list a page at a time, one file, and the
//! console's job page. The owner check and the blocking walks off the
//! async workers are here once, for REST and the console alike.

use app::model::views::{FileEntry, JobDetail, LogChunk};
use app::model::{JobView, Role};

use super::output::{self, Download};
use crate::auth::Caller;
use crate::executor::layout::Layout;
use crate::services::{ServiceError, ServiceResult, Services};

/// Files the console's job page lists (the rest: `GET /v1/jobs/{id}/files`).
const CONSOLE_FILES: usize = 100;

pub fn layout(state: &Services) -> Layout {
    Layout::new(&state.settings.executor.output_root)
}

/// The job, if the caller may read its output.
pub async fn readable(state: &Services, caller: &Caller, id: i64) -> ServiceResult<JobView> {
    let job = super::get(state, caller, id).await?;
    output::check_owner(caller, &job)?;
    Ok(job)
}

/// Up to 256 KiB of the log from `offset`.
pub async fn log(state: &Services, caller: &Caller, id: i64, offset: u64) -> ServiceResult<LogChunk> {
    let job = readable(state, caller, id).await?;
    output::read_log(&layout(state), &job, offset)
}

/// The log's last 64 KiB before `end` (None = its end now).
pub async fn log_tail(state: &Services, caller: &Caller, id: i64, end: Option<u64>) -> ServiceResult<LogChunk> {
    let job = readable(state, caller, id).await?;
    output::read_log_tail(&layout(state), &job, end)
}

/// One page of the job's files (`limit` 1 to 10,000) and how many there
/// are in all.
pub async fn files(
    state: &Services,
    caller: &Caller,
    id: i64,
    after: Option<String>,
    limit: Option<i64>,
) -> ServiceResult<(Vec<FileEntry>, usize)> {
    let limit = limit.unwrap_or(output::DEFAULT_FILES_PAGE as i64);
    if !(1..=output::MAX_FILES_PAGE as i64).contains(&limit) {
        return Err(ServiceError::field(
            "limit",
            format!("must be between 1 and {}, got {limit}", output::MAX_FILES_PAGE),
        ));
    }
    readable(state, caller, id).await?;
    files_page(state, id, after, limit as usize).await
}

/// One output file, opened for download.
pub async fn file(state: &Services, caller: &Caller, id: i64, path: String) -> ServiceResult<Download> {
    readable(state, caller, id).await?;
    let layout = layout(state);
    blocking(move || output::open_file(&layout, id, &path)).await
}

/// The console's job page: the job, and for its owner and admins the
/// first files of its output.
pub async fn detail(state: &Services, caller: &Caller, id: i64) -> ServiceResult<JobDetail> {
    let job = super::get(state, caller, id).await?;
    let mine = caller.user.role == Role::Admin || caller.user.username == job.user;
    // the first page only: the page refreshes while it is open
    let (files, files_total) = if mine { files_page(state, id, None, CONSOLE_FILES).await? } else { (Vec::new(), 0) };
    Ok(JobDetail { can_cancel: mine && !job.state.is_terminal(), can_read_output: mine, job, files, files_total })
}

async fn files_page(
    state: &Services,
    id: i64,
    after: Option<String>,
    limit: usize,
) -> ServiceResult<(Vec<FileEntry>, usize)> {
    let layout = layout(state);
    blocking(move || output::list_files_page(&layout, id, after.as_deref(), limit)).await
}

/// A walk of a job's files or an open of one: never on an async worker.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> ServiceResult<T> + Send + 'static) -> ServiceResult<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| ServiceError::Internal(format!("job output: {e}")))?
}
