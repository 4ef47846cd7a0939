//! Job operations shared by the REST API and the console: submit (with
//! the policy's admission checks, batched in [`submit_batch`]), view,
//! list, cancel; [`input`] validates, [`output`] and [`reading`] serve
//! what a job wrote to its owner.

pub mod arrays;
pub mod field;
pub mod gates;
pub mod input;
pub mod output;
pub mod reading;
pub mod submit_batch;

use app::model::{JobState, Role};
use app::msg;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::{ServiceError, Services};
use app::model::JobView;
use input::{FieldError, ValidSubmit};

/// Admits and stores a job; concurrent submits share one transaction
/// (see [`submit_batch`]).
pub async fn submit(
    state: &Services,
    caller: &Caller,
    job: ValidSubmit,
) -> Result<app::model::Submitted, ServiceError> {
    can_run_jobs_of(&state.settings, caller)?;
    crate::services::storage::within_quota(state, caller).await?;
    let view = state.submits.submit(&state.db, &state.settings, caller, job).await?;
    state.wake_scheduler();
    Ok(view)
}

/// Policy §8: a job runs as its user's own uid or not at all. On Slurm
/// that uid must be configured (the nodes know users from the site's
/// directory); a local server that is not root cannot switch uids at all.
fn can_run_jobs_of(settings: &crate::config::Settings, caller: &Caller) -> Result<(), ServiceError> {
    use crate::config::ExecutorKind;
    match settings.executor.kind {
        ExecutorKind::Slurm if caller.user.unix_uid.is_none() => {
            Err(ServiceError::Forbidden(msg!("err-no-uid", user = &caller.user.username)))
        }
        ExecutorKind::Local if !settings.executor.allow_unisolated && !nix::unistd::geteuid().is_root() => {
            Err(ServiceError::Forbidden(msg!("err-not-root")))
        }
        _ => Ok(()),
    }
}

/// A job may run only in a READY workspace of its own lab.
async fn check_workspace(conn: &mut impl crate::db::AsConn, lab: &str, name: &str) -> Result<(), ServiceError> {
    let status = db::workspaces::get(conn, lab, name).await?.map(|w| w.status);
    let problem = match status.as_deref() {
        Some("READY") => return Ok(()),
        None => msg!("err-no-workspace", name = name, lab = lab),
        Some("BUILDING") => msg!("err-workspace-building", name = name),
        Some(other) => msg!("err-workspace-broken", name = name, status = other),
    };
    Err(FieldError { field: "workspace", message: problem }.into())
}

/// Researchers see their own lab's jobs; other labs' jobs do not exist
/// for them (404).
fn visible(caller: &Caller, job: &JobView) -> bool {
    caller.user.role == Role::Admin || caller.user.lab == job.lab
}

/// The forecast's estimate for a job still waiting.
fn estimate(state: &Services, job: &JobView) -> Option<String> {
    matches!(job.state, JobState::GlobalQueueWait | JobState::UserQueueWait)
        .then(|| state.forecast.of(job.id))
        .flatten()
}

pub async fn get(state: &Services, caller: &Caller, id: i64) -> Result<JobView, ServiceError> {
    let mut view = db::job_view::view(&mut state.db.acquire().await?, id)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-such-job")))?;
    if visible(caller, &view) {
        view.estimated_start = estimate(state, &view);
        Ok(reading::with_idle_end(&state.settings, view))
    } else {
        Err(ServiceError::NotFound(msg!("err-no-such-job")))
    }
}

pub async fn cancel(state: &Services, caller: &Caller, id: i64) -> Result<JobView, ServiceError> {
    let view = get(state, caller, id).await?;
    if caller.user.role != Role::Admin && view.user != caller.user.username {
        return Err(ServiceError::Forbidden(msg!("err-cancel-not-yours")));
    }
    let mut tx = db::write_tx(&state.db).await?;
    let now = now_ms();
    let outcome = db::jobs::cancel(&mut tx, id, now).await?;
    let before = view.state;
    let view = db::job_view::view(&mut tx, id).await?.ok_or_else(|| ServiceError::NotFound(msg!("err-no-such-job")))?;
    let cancelled = matches!(outcome, db::jobs::CancelOutcome::Cancelled | db::jobs::CancelOutcome::Cancelling);
    if cancelled && view.user != caller.user.username {
        // an admin stopping someone else's work answers for it (api.md)
        let detail = serde_json::json!({"job": id, "owner": view.user, "lab": view.lab, "state_before": before});
        db::audit::record(&mut tx, &caller.user.username, "job.cancel", Some(&id.to_string()), &detail, now).await?;
    }
    tx.commit().await?;
    match outcome {
        db::jobs::CancelOutcome::AlreadyEnded => {
            Err(ServiceError::Conflict(msg!("err-job-ended", id = id, state = view.state.to_string())))
        }
        db::jobs::CancelOutcome::NotFound => Err(ServiceError::NotFound(msg!("err-no-such-job"))),
        db::jobs::CancelOutcome::Cancelled | db::jobs::CancelOutcome::Cancelling => {
            state.wake_scheduler();
            debug_assert!(matches!(view.state, JobState::Cancelled | JobState::Cancelling));
            Ok(view)
        }
    }
}

/// `GET /v1/jobs` parameters, as given.
#[derive(Debug, Default, Clone, serde::Deserialize, utoipa::IntoParams)]
pub struct ListQuery {
    /// One state or several, comma-separated.
    pub state: Option<String>,
    pub user: Option<String>,
    pub lab: Option<String>,
    pub limit: Option<i64>,
    pub before: Option<i64>,
    /// Only this array's elements.
    pub array: Option<i64>,
    /// Only `batch` jobs or only `session`s.
    pub kind: Option<String>,
}

pub const DEFAULT_PAGE: i64 = 50;
pub const MAX_PAGE: i64 = 200;

/// Newest first. Researchers see their own lab's jobs only (asking for
/// another lab gives an empty page, as if it had none).
pub async fn list(
    state: &Services,
    caller: &Caller,
    q: &ListQuery,
) -> Result<app::model::views::JobPage, ServiceError> {
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(
            FieldError { field: "limit", message: msg!("err-range", min = 1u32, max = MAX_PAGE, got = limit) }.into()
        );
    }
    if let Some(states) = q.state.as_deref().filter(|s| !s.is_empty()) {
        for s in states.split(',') {
            s.parse::<JobState>().map_err(|_| FieldError {
                field: "state",
                message: msg!(
                    "err-one-of",
                    text = s,
                    options = JobState::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                ),
            })?;
        }
    }
    let kind = match q.kind.as_deref().filter(|k| !k.is_empty()) {
        None => None,
        Some(k @ ("batch" | "session")) => Some(k),
        Some(other) => {
            return Err(FieldError {
                field: "kind",
                message: msg!("err-one-of", text = other, options = "batch, session"),
            }
            .into())
        }
    };
    let lab = match (caller.user.role, q.lab.as_deref()) {
        (Role::Admin, lab) => lab,
        (_, Some(lab)) if lab != caller.user.lab => {
            return Ok(app::model::views::JobPage { jobs: Vec::new(), next: None, arrays: Vec::new() })
        }
        (_, _) => Some(caller.user.lab.as_str()),
    };
    let filter = db::views::JobFilter {
        states: q.state.as_deref().filter(|s| !s.is_empty()),
        user: q.user.as_deref().filter(|s| !s.is_empty()),
        lab,
        before: q.before.unwrap_or(i64::MAX),
        limit,
        array: q.array,
        kind,
    };
    let mut conn = state.db.acquire().await?;
    let ids = db::views::job_ids(&mut conn, &filter).await?;
    let mut jobs = Vec::with_capacity(ids.len());
    for id in &ids {
        if let Some(mut view) = db::job_view::view(&mut conn, *id).await? {
            view.estimated_start = estimate(state, &view);
            jobs.push(reading::with_idle_end(&state.settings, view));
        }
    }
    let next = (ids.len() as i64 == limit).then(|| ids.last().copied()).flatten();
    let mut arrays: Vec<i64> = jobs.iter().filter_map(|j| j.array.map(|a| a.id)).collect();
    arrays.sort_unstable();
    arrays.dedup();
    let arrays = db::gates::summaries(&mut conn, &arrays).await?;
    Ok(app::model::views::JobPage { jobs, next, arrays })
}
