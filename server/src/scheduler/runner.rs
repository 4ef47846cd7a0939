//! The loop around [`decide`](crate::policy::decide): every `scheduler.cycle_ms`,
//! and at once when woken (submit, job end, admin change), it
//!
//! 1. records attempts the executor reports as ended (charging them),
//! 2. reads a snapshot, decides, and applies the plan in one transaction
//!    (dispatches are recorded before the executor is called),
//! 3. hands dispatches to the executor, confirming each or putting the
//!    job back in the queue with its place kept and the error recorded,
//! 4. forwards cancel requests to the executor.

use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use tokio::sync::Notify;

use crate::clock::now_ms;
use crate::db;
use crate::executor::layout::Layout;
use crate::executor::{Executor, ExecutorError, Finished, Observed};
use crate::policy::oom::EndSignal;
use crate::policy::oom::DEFAULT_GPU_OOM_PATTERNS;

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Executor(#[from] ExecutorError),
}

/// What one cycle did (for tests and logs).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CycleReport {
    /// The executor could not be reached this cycle (e.g. Slurm is down).
    pub executor_problem: Option<String>,
    pub ended: usize,
    pub started: Vec<i64>,
    pub refused: Vec<i64>,
    pub waiting: usize,
}

/// The longest a woken cycle waits after the previous one ended.
pub const MAX_WOKEN_CYCLE_GAP: Duration = Duration::from_millis(250);

#[derive(Clone)]
pub struct Scheduler {
    pub db: SqlitePool,
    pub executor: Arc<dyn Executor>,
    pub wake: Arc<Notify>,
    pub cycle: Duration,
    pub grace: Duration,
    pub layout: Layout,
    /// What /healthz and the console say about the executor.
    pub health: crate::services::ExecutorHealth,
    /// `cancel.unconfirmed_after_seconds`
    pub kill_unconfirmed_after: Duration,
    /// LLM backfill's settings, read every cycle (admins change them).
    pub backfill: crate::services::admin::backfill::BackfillControl,
    /// When each idle GPU became idle (for `backfill.min_idle_seconds`).
    pub idle_since: Arc<std::sync::Mutex<std::collections::HashMap<crate::policy::backfill::GpuKey, i64>>>,
}

impl Scheduler {
    /// Runs cycles until `shutdown` resolves.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send) {
        tokio::pin!(shutdown);
        // until the executor has been asked what ran while we were away,
        // nothing may be dispatched (it could start an attempt twice)
        loop {
            match self.recover().await {
                Ok(n) if n > 0 => tracing::info!(attempts = n, "recovered attempts from the executor"),
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "cannot reconcile with the executor; retrying");
                    self.health.set(Some(e.to_string()));
                    tokio::select! {
                        _ = &mut shutdown => return,
                        _ = tokio::time::sleep(self.cycle) => continue,
                    }
                }
            }
            self.health.set(None);
            break;
        }
        if let Err(e) = self.recover_backfill().await {
            tracing::error!(error = %e, "cannot reconcile backfill instances");
        }
        let mut last_end = tokio::time::Instant::now();
        let mut last_took = Duration::ZERO;
        loop {
            // with backfill on, idle time must be noticed without a wake-up
            let tick = if self.backfill.get().policy().enabled {
                self.cycle.min(super::backfill_loop::BACKFILL_TICK)
            } else {
                self.cycle
            };
            tokio::select! {
                _ = &mut shutdown => break,
                _ = tokio::time::sleep(tick) => {}
                _ = self.wake.notified() => {
                    // a stream of submits would otherwise run cycle after
                    // cycle, each taking CPU and write turns the submits
                    // need: a woken cycle waits twice as long as the last
                    // one took (so the loop takes at most a third of the
                    // time; with once, the submits' p99 was ~20 % higher),
                    // and wakes in between share it
                    tokio::select! {
                        _ = &mut shutdown => break,
                        _ = tokio::time::sleep_until(last_end + (last_took * 2).min(MAX_WOKEN_CYCLE_GAP)) => {}
                    }
                }
            }
            let began = tokio::time::Instant::now();
            let outcome = self.cycle_once().await;
            last_end = tokio::time::Instant::now();
            last_took = last_end - began;
            metrics::histogram!("scheduler_cycle_seconds").record(last_took.as_secs_f64());
            match outcome {
                Ok(report) => {
                    if !report.started.is_empty() || report.ended > 0 {
                        tracing::info!(started = ?report.started, ended = report.ended, waiting = report.waiting, "scheduler cycle");
                    }
                    self.health.set(report.executor_problem);
                }
                Err(LoopError::Executor(e)) => {
                    tracing::error!(error = %e, "scheduler cycle failed");
                    self.health.set(Some(e.to_string()));
                }
                Err(e) => tracing::error!(error = %e, "scheduler cycle failed"),
            }
        }
    }

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
            if let Some(req) = db::jobs::start_request(&mut conn, *job, &self.layout).await? {
                requests.push(req);
            }
        }
        drop(conn);
        let observed = self.executor.recover(requests).await?;
        let mut tx = db::write_tx(&self.db).await?;
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
                    db::jobs::record_end(&mut tx, &lost, DEFAULT_GPU_OOM_PATTERNS, now_ms()).await?;
                }
                (_, false) => {}
            }
        }
        tx.commit().await?;
        Ok(live.len())
    }

    pub async fn cycle_once(&self) -> Result<CycleReport, LoopError> {
        let mut report = CycleReport::default();
        let mut phase_began = std::time::Instant::now();
        let mut phase_done = |phase: &'static str| {
            metrics::histogram!("scheduler_phase_seconds", "phase" => phase)
                .record(phase_began.elapsed().as_secs_f64());
            phase_began = std::time::Instant::now();
        };

        // 1. attempts (and backfill instances) that ended
        self.backfill_ended().await?;
        // (one transaction for all: each write turn taken is one more wait
        // for the submits queued behind it)
        let finished = self.executor.take_finished().await?;
        if !finished.is_empty() {
            let mut tx = db::write_tx(&self.db).await?;
            for end in &finished {
                if db::jobs::record_end(&mut tx, end, DEFAULT_GPU_OOM_PATTERNS, now_ms()).await?.is_some() {
                    report.ended += 1;
                }
            }
            tx.commit().await?;
        }
        phase_done("ends");

        // 2. nodes as the executor reports them (Slurm), then decide and
        //    record the plan
        match self.executor.inventory().await {
            Ok(Some(nodes)) => {
                let mut tx = db::write_tx(&self.db).await?;
                db::cluster::sync_inventory(&mut tx, &nodes, now_ms()).await?;
                tx.commit().await?;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the executor's nodes");
                if matches!(e, ExecutorError::Unavailable(_)) {
                    report.executor_problem = Some(e.to_string());
                }
            }
        }
        phase_done("inventory");
        //    The snapshot is read and decided on outside the write turn, so
        //    submits are not held up meanwhile; jobs they add wait for the
        //    next cycle, as if they had come a moment later. Any other
        //    commit in between (an end, a cancel, an admin change) may make
        //    the plan wrong, and then it is read and decided again under the
        //    write turn.
        let now = now_ms();
        let inputs_seen = db::plan_inputs();
        let mut read = self.db.begin().await?;
        let mut snapshot = db::scheduling::load_snapshot(&mut read, now).await?;
        let mut marks = db::scheduling::waiting_marks(&mut read).await?;
        read.rollback().await?;
        let mut plan = crate::policy::decide(&snapshot);
        let mut tx = db::write_tx(&self.db).await?;
        if db::plan_inputs() != inputs_seen {
            metrics::counter!("scheduler_snapshots_reread_total").increment(1);
            snapshot = db::scheduling::load_snapshot(&mut tx, now).await?;
            marks = db::scheduling::waiting_marks(&mut tx).await?;
            plan = crate::policy::decide(&snapshot);
        }
        let dispatched = db::scheduling::apply_plan(&mut tx, &plan, &marks, now).await?;
        let mut requests = Vec::with_capacity(dispatched.len());
        for job in &dispatched {
            if let Some(req) = db::jobs::start_request(&mut tx, *job, &self.layout).await? {
                requests.push(req);
            }
        }
        let (backfill, backfill_refs) = self.plan_backfill(&mut tx, &snapshot, &plan).await?;
        tx.commit().await?;
        report.waiting = plan.waiting.len();
        phase_done("decide");

        // 3. reclaim backfill research needs (or maintenance ends), then
        //    start the dispatches
        self.reclaim(&backfill.reclaim, &backfill_refs).await?;
        //    (confirmed together once all were started: an attempt started
        //    but not yet confirmed is adopted on recovery, so waiting changes
        //    nothing but the number of write turns taken)
        let mut results = Vec::with_capacity(requests.len());
        for req in requests {
            let job = req.job;
            failpoint("before-start");
            let start_began = std::time::Instant::now();
            let result = self.executor.start(req).await;
            metrics::histogram!("executor_start_seconds").record(start_began.elapsed().as_secs_f64());
            failpoint("before-confirm");
            results.push((job, result, now_ms()));
        }
        if !results.is_empty() {
            let mut tx = db::write_tx(&self.db).await?;
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
        }
        phase_done("starts");

        // 4. backfill on GPUs idle long enough
        self.deploy(backfill.deploy).await?;
        phase_done("backfill");

        // 5. cancels: ends never confirmed are given up on, the rest signalled
        self.give_up_unconfirmed_cancels().await?;
        let cancelling = db::jobs::cancelling_attempts(&mut *self.db.acquire().await?).await?;
        for (job, attempt) in cancelling {
            if let Err(e) = self.executor.cancel(job, attempt, self.grace).await {
                tracing::warn!(job, error = %e, "cancel not delivered; will retry");
            }
        }
        phase_done("cancels");
        Ok(report)
    }
}

impl Scheduler {
    /// Policy §8: a cancel whose end the executor has not confirmed
    /// `kill_unconfirmed_after` after the request ends the job CANCELLED
    /// (charged to now) with `kill_unconfirmed`, and drains its node so
    /// nothing new lands beside processes that may still run; the audit
    /// log tells admins.
    async fn give_up_unconfirmed_cancels(&self) -> Result<(), LoopError> {
        let now = now_ms();
        let before = now - self.kill_unconfirmed_after.as_millis() as i64;
        let stuck = db::jobs::unconfirmed_cancels(&mut *self.db.acquire().await?, before).await?;
        for (job, attempt, node) in stuck {
            let mut tx = db::write_tx(&self.db).await?;
            let end = Finished { job, attempt, end: EndSignal::Cancelled, log_tail: String::new(), ended_ms: None };
            db::jobs::record_end(&mut tx, &end, DEFAULT_GPU_OOM_PATTERNS, now).await?;
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
