//! What the decision core reads (a [`Snapshot`]) and what it decides (a
//! [`Plan`]). Plain data: no database rows, no async, no clocks.

use std::fmt;

use app::model::MaintenancePhase;

pub type JobId = i64;
pub type LabId = i64;
pub type UserId = i64;
/// Milliseconds since the Unix epoch.
pub type Millis = i64;

#[derive(Debug, Clone, PartialEq)]
pub struct TierInfo {
    pub name: String,
    pub tflops: f64,
    pub vram_gb: u32,
    /// Higher is better.
    pub sort_order: i64,
    /// Largest request one job may get on this tier.
    pub max_gpus: u32,
    pub active: bool,
}

/// GPUs of one tier on one node (policy §1).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementState {
    pub node: String,
    pub tier: String,
    pub capacity: u32,
    /// False when the node is drained, down or being removed: nothing new
    /// may start there and reservations on it end (R5).
    pub usable: bool,
    /// GPU indices not used by a research job (idle or running backfill;
    /// backfill always yields). Reserved GPUs are in here too.
    pub free: Vec<u32>,
    /// The subset of `free` currently serving LLM backfill.
    pub backfill: Vec<u32>,
}

/// A lab's decayed usage, valid at `as_of_ms` (policy §2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabUsage {
    pub lab: LabId,
    pub value: f64,
    pub as_of_ms: Millis,
}

/// A live reservation: GPUs of one placement held for a rank-1 job (the
/// seed), or the drain of a planned job's placement (§11).
#[derive(Debug, Clone, PartialEq)]
pub struct Reservation {
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    /// `planned`: GPUs of the placement booked for the job that stood
    /// idle when the last cycle ended (no job fitted before its start)
    /// and are not among `gpus`; charged like held GPUs.
    pub drained: u32,
    /// Accrued cost covers the time up to here.
    pub accrued_at_ms: Millis,
}

impl Reservation {
    /// GPUs the job is charged for while it waits: held and drained.
    pub fn charged_gpus(&self) -> u32 {
        self.gpus.len() as u32 + self.drained
    }
}

/// Reservation GPU-time a job has held and not yet been charged for (R4).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Accrued {
    pub gpu_seconds: f64,
    /// TFLOP-seconds.
    pub cost: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueuedJob {
    pub id: JobId,
    pub lab: LabId,
    pub user: UserId,
    pub num_gpus: u32,
    pub queue_entered_at_ms: Millis,
    /// Raised by GPU-OOM escalation; 0 = any tier.
    pub min_vram_gb: u32,
    pub reservation: Option<Box<Reservation>>,
    pub accrued: Accrued,
    /// How long it may run once started (its time limit): the planned
    /// policy's backfill and start plan count on it (§11).
    pub time_limit_ms: Millis,
}

/// A job in its owner's personal queue (`USER_QUEUE_WAIT`).
#[derive(Debug, Clone, PartialEq)]
pub struct PersonalJob {
    pub job: QueuedJob,
    pub submitted_at_ms: Millis,
    /// Its dependencies, with how each depended-on job stands.
    pub after: Vec<After>,
    /// The array it is an element of.
    pub array: Option<ArrayId>,
}

impl PersonalJob {
    /// A plain job: no dependencies, no array.
    pub fn plain(job: QueuedJob, submitted_at_ms: Millis) -> Self {
        PersonalJob { job, submitted_at_ms, after: Vec::new(), array: None }
    }
}

pub type ArrayId = i64;

/// `afterok | afterany | afternotok` (api.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterKind {
    Ok,
    Any,
    NotOk,
}

/// How a depended-on job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Unfinished,
    Completed,
    /// FAILED or CANCELLED.
    NotOk,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct After {
    pub kind: AfterKind,
    pub on: JobId,
    pub outcome: Outcome,
}

/// An array's `%N` and how many of its elements hold a slot now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayLimit {
    pub array: ArrayId,
    pub max_running: u32,
    pub holding: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UserSlots {
    pub user: UserId,
    pub max_concurrent: u32,
    /// Jobs in GLOBAL_QUEUE_WAIT, DISPATCHING, RUNNING or CANCELLING.
    pub holding: u32,
}

/// Which rules decide (policy §11): the seed's §1–§10 exactly, or those
/// with a start plan for the head of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum PolicyMode {
    #[default]
    Seed,
    Planned(PlannedParams),
}

impl PolicyMode {
    /// Whether plans count on running jobs' predicted ends
    /// ([`PlannedParams::predicted_ends`]).
    pub fn predicts_ends(&self) -> bool {
        matches!(self, PolicyMode::Planned(p) if p.predicted_ends)
    }
}

/// `planned`'s settings (§11).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedParams {
    /// Jobs at the head of the fair-share order that get a planned start.
    pub depth: usize,
    /// Jobs that waited longer go ahead of fair-share, oldest first…
    pub max_wait_ms: Millis,
    /// …as many as fit in this share of the cluster's GPUs (%, at least
    /// one job): the rest keep the fair-share order.
    pub lift_percent: u32,
    /// Of those, only the oldest this many go ahead of light labs' jobs
    /// (labs using at most the mean of the labs waiting); the others go
    /// right behind them. `u32::MAX`: all of them.
    pub lift_ahead_of_light: u32,
    /// How many planned jobs may book a start later than now (a drain:
    /// the GPUs they book keep longer jobs off); `None`: every one.
    pub drains: Option<DrainBudget>,
    /// A job books a drain only once it has waited this share (%) of its
    /// time limit (its expansion factor): 0 books at once.
    pub drain_after_percent: u32,
    /// GPUs booked for a job that stand idle are charged to its lab.
    pub charge_drains: bool,
    /// Plans see running jobs end at their predicted ends
    /// ([`BusyGpu::predicted_ms`]) instead of their time limits: a drain
    /// goes where the residents are expected to leave first (EASY++).
    pub predicted_ends: bool,
}

/// At most this many drains at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainBudget {
    Jobs(u32),
    /// A share (%) of the usable placements, rounded up (at least one).
    PercentOfPlacements(u32),
}

/// A GPU running a research job, and when the job's time limit ends it
/// at the latest.
#[derive(Debug, Clone, PartialEq)]
pub struct BusyGpu {
    /// Its placement's position in [`Snapshot::placements`]; `None` for a
    /// placement the snapshot does not list (its lab still runs it). An
    /// index, not names: a snapshot lists every busy GPU, and names per
    /// GPU (copied, then shared and counted) were a fifth of a simulated
    /// cycle at 80×8, then a tenth.
    pub placement: Option<usize>,
    pub gpu: u32,
    pub until_ms: Millis,
    /// Whose job it is (a lab running its share is not light, §11) and
    /// when it started (what its end is predicted from,
    /// [`super::predict::predict_busy`]).
    pub lab: LabId,
    pub user: UserId,
    pub started_ms: Millis,
    /// When the job is expected to end (`until_ms` until predicted): the
    /// plan's view with `predicted_ends`; the limit stays the kill time.
    pub predicted_ms: Millis,
}

impl BusyGpu {
    /// A GPU of `user`'s job (of `lab`) on the `placement`-th placement,
    /// started at `started_ms`, ending by `until_ms` and not predicted yet.
    pub fn new(
        placement: Option<usize>,
        gpu: u32,
        (lab, user): (LabId, UserId),
        started_ms: Millis,
        until_ms: Millis,
    ) -> Self {
        BusyGpu { placement, gpu, until_ms, lab, user, started_ms, predicted_ms: until_ms }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub now_ms: Millis,
    pub phase: MaintenancePhase,
    pub tiers: Vec<TierInfo>,
    pub placements: Vec<PlacementState>,
    pub labs: Vec<LabUsage>,
    /// The global queue (GLOBAL_QUEUE_WAIT), any order.
    pub queue: Vec<QueuedJob>,
    pub personal: Vec<PersonalJob>,
    pub users: Vec<UserSlots>,
    /// The `%N` limits of arrays with elements in `personal`.
    pub arrays: Vec<ArrayLimit>,
    /// Research jobs dispatching, running or cancelling (for maintenance).
    pub research_active: u32,
    /// Backfill instances running (for maintenance).
    pub backfill_active: u32,
    pub mode: PolicyMode,
    /// Busy GPUs' latest ends (the planned mode's start plan).
    pub busy_until: Vec<BusyGpu>,
}

/// Why a job is not running (policy §9).
#[derive(Debug, Clone, PartialEq)]
pub enum PendingReason {
    UserConcurrencyLimit,
    /// A dependency has not ended yet (api.md `DEPENDENCY`).
    Dependency,
    /// Its array already has `%N` elements holding slots.
    ArrayLimit {
        max_running: u32,
    },
    WaitingForHigherRank,
    Reserving {
        have: u32,
        need: u32,
        node: String,
        tier: String,
    },
    NoIdleGpu,
    /// `NO_IDLE_GPU` for a job that must have at least this much VRAM
    /// (asked at submit, or raised by a GPU OOM): smaller tiers may sit
    /// idle, and it says why it does not take them.
    NoIdleLargeGpu {
        min_vram_gb: u32,
    },
    Maintenance,
    /// The planned policy's start plan (§11): it starts on `node/tier` at
    /// `start_ms`; `held` of its `need` GPUs are held for it already.
    Planned {
        node: String,
        tier: String,
        start_ms: Millis,
        held: u32,
        need: u32,
    },
}

impl PendingReason {
    /// The bare code (`RESERVING` without its details).
    pub fn code(&self) -> &'static str {
        match self {
            PendingReason::UserConcurrencyLimit => "USER_CONCURRENCY_LIMIT",
            PendingReason::Dependency => "DEPENDENCY",
            PendingReason::ArrayLimit { .. } => "ARRAY_LIMIT",
            PendingReason::WaitingForHigherRank => "WAITING_FOR_HIGHER_RANK",
            PendingReason::Reserving { .. } => "RESERVING",
            PendingReason::NoIdleGpu | PendingReason::NoIdleLargeGpu { .. } => "NO_IDLE_GPU",
            PendingReason::Maintenance => "MAINTENANCE",
            PendingReason::Planned { .. } => "PLANNED",
        }
    }
}

impl fmt::Display for PendingReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PendingReason::Reserving { have, need, node, tier } => {
                write!(f, "RESERVING ({have}/{need} GPUs on {node}/{tier})")
            }
            PendingReason::ArrayLimit { max_running } => {
                write!(f, "ARRAY_LIMIT ({max_running} of the array may hold slots at once)")
            }
            PendingReason::NoIdleLargeGpu { min_vram_gb } => write!(f, "NO_IDLE_GPU (needs ≥ {min_vram_gb} GB VRAM)"),
            PendingReason::Planned { node, tier, start_ms, held, need } => {
                write!(f, "PLANNED ({held}/{need} GPUs held on {node}/{tier}, start {})", utc_minute(*start_ms))
            }
            other => f.write_str(other.code()),
        }
    }
}

/// `2026-12-04T14:20Z`: a planned start to the minute, in UTC (the
/// console shows it in words).
fn utc_minute(ms: Millis) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!("{:04}-{:02}-{:02}T{:02}:{:02}Z", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute())
}

/// Start a job on these GPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    pub job: JobId,
    pub rank: u32,
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    /// GPUs among `gpus` running backfill: reclaim them first (§7).
    pub reclaim_backfill: Vec<u32>,
    /// Reservation time held so far; charged when the job ends (R4).
    pub accrued: Accrued,
    /// The placement of a reservation this dispatch abandoned (swap).
    pub swapped_from: Option<(String, String)>,
}

/// A global-queue job that stays waiting this cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub job: JobId,
    pub rank: u32,
    pub reason: PendingReason,
    pub reservation: Option<Box<Reservation>>,
    pub accrued: Accrued,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseReason {
    /// R3: no longer rank 1.
    Demoted,
    /// R5: the placement can no longer take the job.
    PlacementLost,
    /// Maintenance began: nothing may be dispatched, so nothing is held.
    Maintenance,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeKind {
    Run,
    Reservation,
}

/// TFLOP-seconds to add to a lab's usage.
#[derive(Debug, Clone, PartialEq)]
pub struct Charge {
    pub lab: LabId,
    pub job: JobId,
    pub tier: String,
    pub kind: ChargeKind,
    pub gpu_seconds: f64,
    pub amount: f64,
}

/// A reservation that ended without its job starting, charged at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    pub job: JobId,
    pub node: String,
    pub tier: String,
    pub reason: ReleaseReason,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// USER_QUEUE_WAIT → GLOBAL_QUEUE_WAIT, entering the queue at `now`.
    pub promotions: Vec<JobId>,
    /// Personal-queue jobs that stay, and why.
    pub held: Vec<(JobId, PendingReason)>,
    /// Personal-queue jobs a dependency can never be met for: they end
    /// CANCELLED with `DEPENDENCY_NEVER_SATISFIED`.
    pub never_satisfied: Vec<JobId>,
    pub dispatches: Vec<Dispatch>,
    pub waiting: Vec<Waiting>,
    pub releases: Vec<Release>,
    pub charges: Vec<Charge>,
    pub phase_change: Option<MaintenancePhase>,
}
