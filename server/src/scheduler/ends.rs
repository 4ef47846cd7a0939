//! Attempts that ended: each is charged (R4), then the policy's outcome
//! table (`crate::policy::outcome`) says where its job goes, and that is
//! recorded. After a restart, the executor is asked what ran meanwhile.

use app::model::JobState;

use super::{LoopError, Scheduler};
use crate::clock::now_ms;
use crate::db;
use crate::db::scheduling::{load_tiers, parse_gpus, record_charges};
use crate::executor::{Finished, Observed};
use crate::policy::oom::EndSignal;
use crate::policy::outcome::{self, EndedAttempt};
use crate::policy::usage::{self, RunSpan};
use crate::policy::{Accrued, ChargeKind};

/// Records an attempt's end: charges it (R4), then finishes the job or,
/// after a GPU OOM with a larger tier left, requeues it (§6). `None` if
/// the attempt is unknown or was recorded already (reported twice:
/// charged once).
pub async fn record_end(
    conn: &mut crate::db::WriteTx,
    end: &Finished,
    patterns: &[&str],
    now_ms: i64,
) -> Result<Option<JobState>, sqlx::Error> {
    let Some(a) = db::jobs::ended_attempt(conn, end.job, end.attempt).await? else {
        return Ok(None);
    };
    if a.phase == "ENDED" {
        return Ok(None);
    }
    // an end seen after a restart is charged up to when it really happened
    let now_ms = end.ended_ms.map_or(now_ms, |ended| ended.max(a.started_at).min(now_ms));
    let gpus = parse_gpus(Some(&a.gpu_indices)).len() as u32;
    let run =
        RunSpan { tier: &a.tier, tflops: a.tflops.unwrap_or(0.0), gpus, started_ms: a.started_at, ended_ms: now_ms };
    let accrued = Accrued { gpu_seconds: a.reservation_gpu_seconds, cost: a.reservation_cost };
    let reservation_tier = a.accrued_tier.as_deref().unwrap_or(&a.tier);
    let charges = usage::end_charges(a.lab_id, end.job, Some(run), accrued, reservation_tier);
    let attempt_usage: f64 = charges.iter().map(|c| c.amount).sum();
    // folded from +0.0: an empty f64 sum is -0.0
    let reserved = charges.iter().filter(|c| c.kind == ChargeKind::Reservation).fold(0.0, |sum, c| sum + c.amount);
    record_charges(conn, &charges, now_ms).await?;

    let ended = EndedAttempt {
        end: end.end,
        log_tail: &end.log_tail,
        cancelling: a.state == "CANCELLING",
        vram_gb: a.vram_gb.unwrap_or(0) as u32,
        num_gpus: a.num_gpus as u32,
        attempt: end.attempt,
        escalates: !a.session,
    };
    let verdict = outcome::verdict(&ended, &load_tiers(conn).await?, patterns);
    db::jobs::close_attempt(conn, a.id, now_ms, verdict.exit_code, verdict.reason, attempt_usage, reserved).await?;
    match verdict.retry {
        Some(retry) => {
            db::jobs::requeue_for_larger_tier(conn, end.job, retry.attempt, retry.min_vram_gb, verdict.exit_code)
                .await?
        }
        None => db::jobs::finish(conn, end.job, verdict.state, now_ms, verdict.exit_code, verdict.reason).await?,
    }
    Ok(Some(verdict.state))
}

impl Scheduler {
    /// Reconciles the database with the executor after a (re)start:
    /// attempts still running there are adopted (a dispatch that reached
    /// the executor before a crash is confirmed), ended ones are recorded
    /// through the next cycle, and dispatches that never reached it go
    /// back to the queue with their place kept. Returns how many
    /// attempts were looked at.
    pub async fn recover(&self) -> Result<usize, LoopError> {
        let mut conn = self.db.acquire().await?;
        let live = db::jobs::live_attempts(&mut conn).await?;
        let mut requests = Vec::with_capacity(live.len());
        for (job, _, _) in &live {
            if let Some(req) = db::jobs::start_request(&mut conn, *job, &self.layout, &self.places).await? {
                requests.push(req);
            }
        }
        drop(conn);
        let observed = self.executor.recover(requests).await?;
        let mut tx = self.write().await?;
        for (job, attempt, seen) in observed {
            let dispatching = live.iter().any(|(j, a, d)| *j == job && *a == attempt && *d);
            match (seen, dispatching) {
                (Observed::Running { started_ms } | Observed::Ended { started_ms }, true) => {
                    db::jobs::confirm_start(&mut tx, job, started_ms).await?;
                }
                (Observed::NotStarted, true) => {
                    db::jobs::undo_dispatch(
                        &mut tx,
                        job,
                        "the server restarted before this dispatch reached the executor",
                        now_ms(),
                    )
                    .await?;
                }
                (Observed::NotStarted, false) => {
                    let lost = Finished { job, attempt, end: EndSignal::Lost, log_tail: String::new(), ended_ms: None };
                    record_end(&mut tx, &lost, &[], now_ms()).await?;
                }
                (_, false) => {}
            }
        }
        tx.commit().await?;
        Ok(live.len())
    }
}
