//! Executors run what the scheduler decided. The loop talks to them only
//! through [`Executor`]; `timed` is a stand-in that "runs" attempts for a
//! given time (tests drive the loop with it), and the local-process and
//! Slurm executors implement the same trait.

mod attempt_files;
pub mod backfill_local;
pub mod build_box;
pub mod contain;
pub mod container;
pub mod dataset_access;
pub mod devices;
pub mod egress;
pub mod enter;
pub mod env;
pub mod files;
pub mod layout;
pub mod limits;
pub mod local;
pub mod places;
pub mod record;
pub mod share_group;
pub mod slurm;
pub mod slurm_cli;
pub mod spawner;
pub mod timed;
pub mod walk;

use std::path::PathBuf;
use std::time::Duration;

use crate::policy::oom::EndSignal;
use crate::policy::JobId;

/// `bash` by its absolute path, found once on the server's PATH. A child
/// given its own PATH and a bare program name makes the standard library
/// fork the whole server instead of using `posix_spawn`; with a large
/// heap that fork took ~30 ms per job and stalled every other thread.
pub fn bash() -> &'static std::path::Path {
    static BASH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASH.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        std::env::split_paths(&path)
            .map(|dir| dir.join("bash"))
            .find(|candidate| candidate.is_file())
            .unwrap_or_else(|| PathBuf::from("/bin/bash"))
    })
}

/// Everything needed to start one attempt of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct StartRequest {
    pub job: JobId,
    pub attempt: u32,
    pub node: String,
    pub tier: String,
    /// The tier's Slurm partition.
    pub partition: String,
    pub gpus: Vec<u32>,
    /// Shell script body, run with bash.
    pub command: String,
    /// The job's variables and the platform's ([`env::attempt_env`]).
    pub env: Vec<(String, String)>,
    pub time_limit: Duration,
    pub cpus: u32,
    pub mem_gb: u32,
    /// The uid the job runs as: the user's configured one, else the one
    /// allocated from `executor.uid_range` (never root, never shared).
    pub unix_uid: Option<u32>,
    /// Whether `unix_uid` is the configured one (Slurm needs that: its
    /// nodes know users from the site's directory only).
    pub uid_configured: bool,
    /// The primary group to run with (the directory's `gidNumber`); None
    /// = the uid's own group (the passwd entry's on Slurm, the uid's
    /// number locally).
    pub unix_gid: Option<u32>,
    /// Supplementary groups (the directory's posixGroups); never 0. On
    /// Slurm the nodes set them from their own directory (initgroups).
    pub groups: Vec<u32>,
    pub output_dir: PathBuf,
    /// The job's workspace image: the attempt runs inside it with
    /// Apptainer (policy §8); None = directly on the host.
    pub image: Option<PathBuf>,
    /// The job's home, lab share and datasets (policy §13), made by the
    /// executor before the job starts; None = none (tests).
    pub places: Option<places::JobPlaces>,
    /// Whose attempt this is, as this database knows it (the job's id,
    /// attempt and submit time): written into the attempt's record, and a
    /// record that says otherwise is another job's past (a restored
    /// database, #44), never adopted.
    pub owner: String,
}

/// An attempt that ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub job: JobId,
    pub attempt: u32,
    pub end: EndSignal,
    /// The last bytes of its output (for the GPU-OOM rule).
    pub log_tail: String,
    /// When it ended, if the executor knows better than "now" (an end
    /// discovered after a restart is charged only up to here).
    pub ended_ms: Option<i64>,
}

/// What the executor found for an attempt the database has as
/// dispatched or running (see [`Executor::recover`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed {
    /// Nothing of it was ever started: safe to dispatch again.
    NotStarted,
    /// Running there; it is watched from now on.
    Running { started_ms: i64 },
    /// It ended (or was lost); the end comes through `take_finished`.
    Ended { started_ms: i64 },
}

#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error("the executor refused the attempt: {0}")]
    Refused(String),
    #[error("the executor is unavailable: {0}")]
    Unavailable(String),
}

#[async_trait::async_trait]
pub trait Executor: Send + Sync + 'static {
    /// Starts an attempt. Must be idempotent per (job, attempt).
    async fn start(&self, request: StartRequest) -> Result<(), ExecutorError>;
    /// Attempts that ended since the previous call.
    async fn take_finished(&self) -> Result<Vec<Finished>, ExecutorError>;
    /// Asks an attempt to stop: SIGTERM, `grace`, then SIGKILL.
    async fn cancel(&self, job: JobId, attempt: u32, grace: Duration) -> Result<(), ExecutorError>;
    /// After a restart: what became of attempts the database has as
    /// dispatched or running. Running ones are adopted (watched again),
    /// ended ones are reported through `take_finished`.
    async fn recover(&self, attempts: Vec<StartRequest>) -> Result<Vec<(JobId, u32, Observed)>, ExecutorError> {
        Ok(attempts.into_iter().map(|a| (a.job, a.attempt, Observed::NotStarted)).collect())
    }
    /// What it enforces on every job, for the Policy page (policy §8).
    fn isolation(&self) -> app::model::policy::IsolationFacts {
        app::model::policy::IsolationFacts::default()
    }
    /// The longest one `start` or `deploy_backfill` call may take: a
    /// scheduler taking over waits out what is left of it beyond the
    /// lease's margin before it reconciles, so a start its predecessor
    /// had under way when it died or was paused lands first and is
    /// adopted, rather than put back and started a second time.
    fn longest_start(&self) -> Duration {
        Duration::from_secs(2)
    }
    /// The nodes and GPUs the executor knows of, when it is the source of
    /// truth for them (Slurm); `None` = the configured nodes are.
    async fn inventory(&self) -> Result<Option<Vec<NodeInventory>>, ExecutorError> {
        Ok(None)
    }
    /// Starts an LLM backfill instance (policy §7) in the preemptible class.
    async fn deploy_backfill(&self, request: BackfillRequest) -> Result<BackfillStarted, ExecutorError> {
        let _ = request;
        Err(ExecutorError::Refused("this executor does not run LLM backfill".into()))
    }
    /// Stops an instance: SIGTERM, `grace`, SIGKILL; returns once it is gone.
    async fn reclaim_backfill(&self, id: i64, executor_ref: &str, grace: Duration) -> Result<(), ExecutorError> {
        let _ = (id, executor_ref, grace);
        Ok(())
    }
    /// Instances that ended by themselves since the previous call.
    async fn take_backfill_ended(&self) -> Result<Vec<i64>, ExecutorError> {
        Ok(Vec::new())
    }
    /// After a restart: is this instance still running? (It is watched
    /// again if so.)
    async fn adopt_backfill(&self, id: i64, executor_ref: &str) -> Result<bool, ExecutorError> {
        let _ = (id, executor_ref);
        Ok(false)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BackfillRequest {
    pub id: i64,
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    /// `backfill.command`, run with bash; it serves on `JPU_BACKFILL_PORT`.
    pub command: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BackfillStarted {
    /// How the executor finds it again (a process group, a Slurm job id).
    pub executor_ref: String,
    pub endpoint: Option<String>,
}

/// A node as the executor sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInventory {
    pub name: String,
    /// `(tier name, GPU count)`
    pub gpus: Vec<(String, u32)>,
    pub up: bool,
    /// Where the site reaches the node (a session's app), if not by name.
    pub addr: Option<String>,
}
