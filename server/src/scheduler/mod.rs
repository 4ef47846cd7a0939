//! The scheduler loop. Every cycle it reads a snapshot from the database,
//! asks the pure policy (`crate::policy`) for a plan, applies the plan in
//! one transaction and starts attempts through the [`Executor`] trait; it
//! never re-implements a rule, what to do is always the policy's answer.
//!
//! - [`run`]: the timer and wake-ups around the cycles, recovery first.
//! - [`cycle`]: one cycle, as named steps.
//! - [`ends`]: recording attempts that ended (charges, then the outcome
//!   table), and reconciling with the executor after a restart.
//! - [`backfill`]: LLM backfill's steps around its pure plan.
//! - [`forecast`]: every few cycles, each waiting job's estimated start.

use std::sync::Arc;
use std::time::Duration;

use crate::db::Pool;
use tokio::sync::Notify;

use crate::executor::layout::Layout;
use crate::executor::{Executor, ExecutorError};

mod backfill;
mod cycle;
pub mod ends;
pub mod forecast;
mod lead;
mod run;

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// Another instance took the scheduler's lease: this one's writes are
    /// refused from here on (api.md "High availability": fencing).
    #[error("another instance holds the scheduler's lease now (epoch {now}, this one had {had})")]
    Fenced { had: i64, now: i64 },
    /// The lease was not renewed in time: this loop no longer asks the
    /// executor to start or stop anything (another may hold it by now).
    #[error("the lease was not renewed in time: nothing more is started or stopped here")]
    Lapsed,
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
    pub db: Pool,
    pub executor: Arc<dyn Executor>,
    pub wake: Arc<Notify>,
    pub cycle: Duration,
    pub grace: Duration,
    pub layout: Layout,
    /// Homes, lab shares and datasets (`storage.root`).
    pub places: crate::executor::places::Places,
    /// What /healthz and the console say about the executor.
    pub health: crate::services::ExecutorHealth,
    /// `cancel.unconfirmed_after_seconds`
    pub kill_unconfirmed_after: Duration,
    /// LLM backfill's settings, read every cycle (admins change them).
    pub backfill: crate::services::admin::backfill::BackfillControl,
    /// When each idle GPU became idle (for `backfill.min_idle_seconds`).
    pub idle_since: Arc<std::sync::Mutex<std::collections::HashMap<crate::policy::backfill::GpuKey, i64>>>,
    /// Where the forecast goes (the views read it).
    pub forecast: crate::services::Forecast,
    /// Set while a forecast runs: the next waits for it rather than piling up.
    pub forecasting: Arc<std::sync::atomic::AtomicBool>,
    /// What users' jobs ran, read with each forecast: `planned` with
    /// `plan_predicted_ends` plans with running jobs' predicted ends.
    pub history: Arc<std::sync::RwLock<Arc<crate::policy::predict::RuntimeHistory>>>,
    /// The rules `decide` applies (`scheduler.policy`).
    pub mode: crate::policy::PolicyMode,
    /// The lease's epoch this loop schedules under (None: unfenced, a
    /// loop no lease was taken for).
    pub epoch: Option<i64>,
    /// Until when (on this process's monotonic clock) the loop may still
    /// act on the executor, moved on by each renewal (None: always, the
    /// one instance on SQLite).
    pub act_until: Option<crate::services::ha::ActUntil>,
}

impl Scheduler {
    /// A write transaction of the scheduler's: refused once another
    /// instance took the lease. The check is inside the transaction,
    /// which holds the database's write lock from its start, so nothing
    /// this loop writes after losing the lease commits.
    pub(crate) async fn write(&self) -> Result<crate::db::WriteTx, LoopError> {
        let mut tx = crate::db::write_tx(&self.db).await?;
        if let Some(had) = self.epoch {
            let (now, _) = crate::db::lease::current(&mut tx).await?;
            if now != had {
                return Err(LoopError::Fenced { had, now });
            }
        }
        Ok(tx)
    }

    /// Checked before each start, cancel and backfill change the loop
    /// asks of the executor: those are not database writes the epoch
    /// fences, so a process that was paused past its lease (`SIGSTOP`)
    /// must notice by its own clock, which runs on meanwhile, before it
    /// acts. A call begun just before the deadline may outlast it (a
    /// Slurm start takes up to twice the command timeout): the next
    /// holder waits that out before it reconciles (`lead::settle`); a
    /// pause inside the call longer than that is what is left.
    pub(crate) fn may_act(&self) -> Result<(), LoopError> {
        match &self.act_until {
            Some(until) if !until.still() => Err(LoopError::Lapsed),
            _ => Ok(()),
        }
    }
}
