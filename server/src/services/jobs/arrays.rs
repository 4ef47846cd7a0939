//! Job arrays as a whole: cancelling every unfinished element at once
//! (`POST /v1/arrays/{id}/cancel`). Submitting one is part of the submit
//! batch; listing one is `GET /v1/jobs?array=ID`.

use app::model::{ArrayJobs, Role};
use app::msg;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::services::{ServiceError, Services};

/// Cancels every unfinished element (queued ones end at once, running
/// ones get the grace period), in one transaction; answers with every
/// element as it now stands.
pub async fn cancel(state: &Services, caller: &Caller, id: i64) -> Result<ArrayJobs, ServiceError> {
    let not_found = || ServiceError::NotFound(msg!("err-no-array", id = id));
    let mut tx = db::write_tx(&state.db).await?;
    let (owner, lab) = db::gates::array_owner(&mut tx, id).await?.ok_or_else(not_found)?;
    let admin = caller.user.role == Role::Admin;
    if !admin && lab != caller.user.lab_id {
        return Err(not_found());
    }
    if !admin && owner != caller.user.username {
        return Err(ServiceError::Forbidden(msg!("err-cancel-array-not-yours")));
    }
    let now = now_ms();
    let elements = db::gates::elements(&mut tx, id).await?;
    let mut stopped = Vec::new();
    for (job, job_state) in &elements {
        if matches!(job_state.as_str(), "COMPLETED" | "FAILED" | "CANCELLED" | "CANCELLING") {
            continue;
        }
        if let db::jobs::CancelOutcome::Cancelled | db::jobs::CancelOutcome::Cancelling =
            db::jobs::cancel(&mut tx, *job, now).await?
        {
            stopped.push(*job);
        }
    }
    if stopped.is_empty() {
        return Err(ServiceError::Conflict(msg!("err-array-done", id = id)));
    }
    if owner != caller.user.username {
        let detail = serde_json::json!({"array": id, "owner": owner, "jobs": stopped.len()});
        db::audit::record(&mut tx, &caller.user.username, "array.cancel", Some(&id.to_string()), &detail, now).await?;
    }
    let mut jobs = Vec::with_capacity(elements.len());
    for (job, _) in &elements {
        jobs.extend(db::job_view::view(&mut tx, *job).await?);
    }
    tx.commit().await?;
    state.wake_scheduler();
    Ok(ArrayJobs { array_id: id, jobs })
}
