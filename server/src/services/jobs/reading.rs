//! Reading a job's output as its owner or an admin: the log from an
//! offset or its tail, the file list a page at a time, one file, and the
//! console's job page. The owner check and the blocking walks off the
//! async workers are here once, for REST and the console alike.

use app::model::views::{FileEntry, JobDetail, LogChunk};
use app::model::{JobState, JobView, Role};
use app::msg;

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
            msg!("err-range", min = 1u32, max = output::MAX_FILES_PAGE, got = limit),
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
    let tiers = crate::db::scheduling::load_tiers(&mut state.db.acquire().await?).await?;
    let ends_by = match (job.state, &job.started_at) {
        (JobState::Running | JobState::Cancelling, Some(started)) => {
            let started = time::OffsetDateTime::parse(started, &time::format_description::well_known::Rfc3339).ok();
            started.map(|t| {
                let end = t + time::Duration::minutes(i64::from(job.time_limit_minutes));
                crate::clock::rfc3339((end.unix_timestamp_nanos() / 1_000_000) as i64)
            })
        }
        _ => None,
    };
    let now = crate::clock::now_ms();
    let minutes_until = |at: &str| crate::clock::parse_rfc3339_ms(at).map(|t| (t - now).max(0) / 60_000);
    let ready = job.session.as_ref().filter(|s| s.state == app::model::SessionState::Ready);
    let idle_minutes_left = ready
        .and_then(|s| s.idle_ends_at.as_deref())
        .and_then(minutes_until)
        .filter(|m| *m < app::model::session::IDLE_WARNING_MINUTES);
    Ok(JobDetail {
        minutes_left: ends_by.as_deref().and_then(minutes_until),
        can_open: ready.is_some() && caller.user.username == job.user,
        idle_minutes_left,
        can_cancel: mine && !job.state.is_terminal(),
        can_read_output: mine,
        max_attempts: max_attempts(&job, &tiers),
        ends_by,
        job,
        files,
        files_total,
    })
}

/// The policy's bound (`policy::oom::most_attempts`) from the tier of the
/// job's first attempt; before any attempt, from the smallest tier that
/// could take it.
fn max_attempts(job: &app::model::JobView, tiers: &[crate::policy::TierInfo]) -> u32 {
    let fits = |t: &&crate::policy::TierInfo| t.active && t.max_gpus >= job.num_gpus;
    let first = match job.attempts.first() {
        Some(a) => tiers.iter().find(|t| t.name == a.tier).map(|t| t.vram_gb),
        None => tiers.iter().filter(fits).map(|t| t.vram_gb).min(),
    };
    first.map_or(1, |vram| crate::policy::oom::most_attempts(tiers, vram, job.num_gpus)).max(job.attempt)
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

/// A session as its owner reads it: with when it ends if left idle.
pub fn with_idle_end(settings: &crate::config::Settings, mut view: JobView) -> JobView {
    use app::model::session::SessionState;
    use app::model::JobKind;
    if view.kind != JobKind::Session {
        return view;
    }
    if let Some(s) = view.session.as_mut().filter(|s| s.state == SessionState::Ready) {
        let idle = settings.sessions.idle_ms();
        s.idle_ends_at = s
            .idle_since
            .as_deref()
            .and_then(crate::clock::parse_rfc3339_ms)
            .map(|since| crate::clock::rfc3339(since + idle));
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(name: &str, vram_gb: u32, max_gpus: u32) -> crate::policy::TierInfo {
        crate::policy::TierInfo {
            name: name.into(),
            tflops: 10.0,
            vram_gb,
            sort_order: i64::from(vram_gb),
            max_gpus,
            active: true,
        }
    }

    #[test]
    fn at_most_one_attempt_per_larger_vram_tier_above_the_first() {
        let tiers = [tier("small", 12, 2), tier("mid", 24, 2), tier("mid2", 24, 2), tier("big", 80, 8)];
        let json = serde_json::json!({"id": 1, "name": "x", "user": "u", "lab": "l", "state": "RUNNING", "num_gpus": 1,
            "attempt": 1, "rank": null, "pending_reason": null, "tier": "small", "node": "n", "gpu_indices": [0],
            "submitted_at": "t", "queue_entered_at": null, "started_at": null, "ended_at": null, "exit_code": null,
            "end_reason": null, "usage_tflop_s": 0.0, "reservation": null, "time_limit_minutes": 60, "last_error": null,
            "attempts": [{"attempt": 1, "tier": "small", "node": "n", "started_at": null, "ended_at": null,
                          "exit_code": null, "reason": null, "usage_tflop_s": 0.0, "reserved_usage_tflop_s": 0.0}]});
        let mut job: JobView = serde_json::from_value(json).unwrap();
        assert_eq!(max_attempts(&job, &tiers), 3, "12 GB, then 24 GB, then 80 GB");
        job.num_gpus = 4;
        assert_eq!(max_attempts(&job, &tiers), 2, "only the 80 GB tier takes 4 GPUs above it");
        job.attempts.clear();
        job.num_gpus = 1;
        assert_eq!(max_attempts(&job, &tiers), 3, "not started: one per VRAM size it could start on");
        let five = [tier("a", 8, 2), tier("b", 12, 2), tier("c", 24, 2), tier("d", 48, 2), tier("e", 80, 2)];
        assert_eq!(max_attempts(&job, &five), crate::policy::oom::MAX_ATTEMPTS, "the policy's cap holds");
    }
}
