//! One cycle of the loop, as named steps:
//!
//! 1. record attempts (and backfill instances) the executor reports ended;
//! 2. take the nodes as the executor reports them (Slurm);
//! 3. read a snapshot, decide, and apply the plan in one transaction
//!    (dispatches are recorded before the executor is called);
//! 4. reclaim backfill research needs, then hand the dispatches to the
//!    executor, confirming each or putting the job back with its place
//!    kept and the error recorded;
//! 5. deploy backfill on GPUs idle long enough;
//! 6. forward cancels (giving up on ends never confirmed).

use std::time::Instant;

use super::ends::record_end;
use super::{CycleReport, LoopError, Scheduler};
use crate::clock::now_ms;
use crate::db;
use crate::executor::{ExecutorError, Finished, StartRequest};
use crate::policy::backfill::BackfillPlan;
use crate::policy::oom::EndSignal;

/// What step 3 leaves for the steps after it.
struct Decided {
    starts: Vec<StartRequest>,
    backfill: BackfillPlan,
    backfill_refs: Vec<(i64, String)>,
    waiting: usize,
}

/// Times each step into `scheduler_phase_seconds{phase}`.
struct Phases(Instant);

impl Phases {
    fn done(&mut self, phase: &'static str) {
        metrics::histogram!("scheduler_phase_seconds", "phase" => phase).record(self.0.elapsed().as_secs_f64());
        self.0 = Instant::now();
    }
}

impl Scheduler {
    pub async fn cycle_once(&self) -> Result<CycleReport, LoopError> {
        let mut report = CycleReport::default();
        let mut phases = Phases(Instant::now());
        report.ended = self.record_ends().await?;
        phases.done("ends");
        report.executor_problem = self.sync_inventory().await?;
        phases.done("inventory");
        let decided = self.decide_and_apply().await?;
        report.waiting = decided.waiting;
        phases.done("decide");
        self.reclaim(&decided.backfill.reclaim, &decided.backfill_refs).await?;
        self.start(decided.starts, &mut report).await?;
        phases.done("starts");
        self.deploy(decided.backfill.deploy).await?;
        phases.done("backfill");
        self.forward_cancels().await?;
        phases.done("cancels");
        Ok(report)
    }

    /// Step 1, in one transaction for all: each write turn taken is one
    /// more wait for the submits queued behind it.
    async fn record_ends(&self) -> Result<usize, LoopError> {
        self.backfill_ended().await?;
        let finished = self.executor.take_finished().await?;
        if finished.is_empty() {
            return Ok(0);
        }
        let mut ended = 0;
        let mut tx = self.write().await?;
        // read at each end: an admin's change applies to the next one
        let patterns = db::oom_patterns::in_force(&mut tx).await?;
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        for end in &finished {
            if record_end(&mut tx, end, &patterns, now_ms()).await?.is_some() {
                ended += 1;
            }
        }
        tx.commit().await?;
        Ok(ended)
    }

    /// Step 2. Returns why the executor cannot be reached, if it cannot.
    async fn sync_inventory(&self) -> Result<Option<String>, LoopError> {
        match self.executor.inventory().await {
            Ok(Some(nodes)) => {
                let mut tx = self.write().await?;
                db::cluster::sync_inventory(&mut tx, &nodes, now_ms()).await?;
                tx.commit().await?;
                Ok(None)
            }
            Ok(None) => Ok(None),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the executor's nodes");
                Ok(matches!(e, ExecutorError::Unavailable(_)).then(|| e.to_string()))
            }
        }
    }

    /// Step 3. The snapshot is read and decided on outside the write turn,
    /// so submits are not held up meanwhile; jobs they add wait for the
    /// next cycle, as if they had come a moment later. Any other commit in
    /// between (an end, a cancel, an admin change) may make the plan wrong,
    /// and then it is read and decided again under the write turn.
    async fn decide_and_apply(&self) -> Result<Decided, LoopError> {
        let now = now_ms();
        let mut read = self.db.begin().await?;
        let (_, inputs_seen) = db::write_counts(&mut read).await?;
        let mut snapshot = db::scheduling::load_snapshot(&mut read, now, self.mode).await?;
        self.predict_ends(&mut snapshot);
        let mut marks = db::scheduling::waiting_marks(&mut read).await?;
        read.rollback().await?;
        let mut plan = crate::policy::decide(&snapshot);
        let mut tx = self.write().await?;
        if db::write_counts(&mut tx).await?.1 != inputs_seen {
            metrics::counter!("scheduler_snapshots_reread_total").increment(1);
            snapshot = db::scheduling::load_snapshot(&mut tx, now, self.mode).await?;
            self.predict_ends(&mut snapshot);
            marks = db::scheduling::waiting_marks(&mut tx).await?;
            plan = crate::policy::decide(&snapshot);
        }
        let dispatched = db::scheduling::apply_plan(&mut tx, &plan, &marks, now).await?;
        let mut starts = Vec::with_capacity(dispatched.len());
        for job in &dispatched {
            if let Some(req) = db::jobs::start_request(&mut tx, *job, &self.layout, &self.places).await? {
                starts.push(req);
            }
        }
        let (backfill, backfill_refs) = self.plan_backfill(&mut tx, &snapshot, &plan).await?;
        tx.commit().await?;
        Ok(Decided { starts, backfill, backfill_refs, waiting: plan.waiting.len() })
    }

    /// `planned` with `plan_predicted_ends`: running jobs end when the
    /// last forecast's history predicts (their limits still kill them).
    fn predict_ends(&self, snapshot: &mut crate::policy::Snapshot) {
        if !self.mode.predicts_ends() {
            return;
        }
        let history = self.history.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        crate::policy::predict::predict_busy(&mut snapshot.busy_until, &history, snapshot.now_ms);
    }

    /// Step 4. The starts are confirmed together once all were made: an
    /// attempt started but not yet confirmed is adopted on recovery, so
    /// waiting changes nothing but the number of write turns taken.
    async fn start(&self, starts: Vec<StartRequest>, report: &mut CycleReport) -> Result<(), LoopError> {
        let mut results = Vec::with_capacity(starts.len());
        for req in starts {
            let job = req.job;
            // not started here: the next scheduler's recovery finds the
            // dispatch never reached the executor and puts it back
            self.may_act()?;
            failpoint("before-start");
            let start_began = Instant::now();
            let result = self.executor.start(req).await;
            metrics::histogram!("executor_start_seconds").record(start_began.elapsed().as_secs_f64());
            failpoint("before-confirm");
            results.push((job, result, now_ms()));
        }
        if results.is_empty() {
            return Ok(());
        }
        let mut tx = self.write().await?;
        for (job, result, at_ms) in results {
            match result {
                Ok(()) => {
                    db::jobs::confirm_start(&mut tx, job, at_ms).await?;
                    report.started.push(job);
                }
                Err(e) => {
                    tracing::warn!(job, error = %e, "dispatch refused; job stays queued");
                    db::jobs::undo_dispatch(&mut tx, job, &e.to_string(), at_ms).await?;
                    report.refused.push(job);
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Step 6: ends never confirmed are given up on, the rest signalled.
    async fn forward_cancels(&self) -> Result<(), LoopError> {
        self.give_up_unconfirmed_cancels().await?;
        let cancelling = db::jobs::cancelling_attempts(&mut self.db.acquire().await?).await?;
        for (job, attempt) in cancelling {
            self.may_act()?;
            if let Err(e) = self.executor.cancel(job, attempt, self.grace).await {
                tracing::warn!(job, error = %e, "cancel not delivered; will retry");
            }
        }
        Ok(())
    }

    /// Policy §8: a cancel whose end the executor has not confirmed
    /// `kill_unconfirmed_after` after the request ends the job CANCELLED
    /// (charged to now) with `kill_unconfirmed`, and drains its node so
    /// nothing new lands beside processes that may still run; the audit
    /// log tells admins.
    async fn give_up_unconfirmed_cancels(&self) -> Result<(), LoopError> {
        let now = now_ms();
        let before = now - self.kill_unconfirmed_after.as_millis() as i64;
        let stuck = db::jobs::unconfirmed_cancels(&mut self.db.acquire().await?, before).await?;
        for (job, attempt, node) in stuck {
            let mut tx = self.write().await?;
            let end = Finished { job, attempt, end: EndSignal::Cancelled, log_tail: String::new(), ended_ms: None };
            record_end(&mut tx, &end, &[], now).await?;
            db::jobs::set_kill_unconfirmed(&mut tx, job).await?;
            db::cluster::set_node_state(&mut tx, &node, "DRAINING").await?;
            let detail = serde_json::json!({"job": job, "attempt": attempt, "reason": "the executor never confirmed the cancelled job's end"});
            db::audit::record(&mut tx, "scheduler", "node.kill_unconfirmed", Some(&node), &detail, now).await?;
            tx.commit().await?;
            tracing::error!(job, node = %node, "cancel never confirmed: job marked kill_unconfirmed, node drained");
        }
        Ok(())
    }
}

/// Crash-safety tests kill the server at a chosen point of a dispatch
/// (`JPU_FAILPOINT=before-start|before-confirm`), as a `kill -9` would.
fn failpoint(name: &str) {
    static ARMED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if ARMED.get_or_init(|| std::env::var("JPU_FAILPOINT").ok()).as_deref() == Some(name) {
        eprintln!("failpoint {name}: aborting");
        std::process::abort();
    }
}
