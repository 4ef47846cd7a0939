//! An in-memory cluster that applies plans: the bookkeeping around
//! [`decide`](super::decide) without a database, in virtual time. Tests
//! and the simulator drive it; it holds state, never policy.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use app::model::{JobState, MaintenancePhase};

use super::model::*;
use super::usage::{self, RunSpan};

#[derive(Debug, Clone, PartialEq)]
pub struct PlacementDef {
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    pub usable: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    pub started_ms: Millis,
    /// Run time before this is already charged (`charge_running`).
    pub charged_until_ms: Millis,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WorldJob {
    pub id: JobId,
    pub lab: LabId,
    pub user: UserId,
    pub num_gpus: u32,
    pub min_vram_gb: u32,
    pub state: JobState,
    pub submitted_ms: Millis,
    pub queue_entered_ms: Millis,
    pub reservation: Option<Box<Reservation>>,
    pub accrued: Accrued,
    pub running: Option<Running>,
    pub rank: Option<u32>,
    pub reason: Option<PendingReason>,
    /// How long it may run once started.
    pub time_limit_ms: Millis,
    /// The array it is an element of (its `%N` is in [`World::arrays`]).
    pub array: Option<ArrayId>,
}

/// The limit of a job nobody gave one (the product's default, 24 h).
pub const DEFAULT_TIME_LIMIT_MS: Millis = 24 * 3_600_000;

impl WorldJob {
    /// A job in `state` since `entered`, nothing held or accrued yet, with
    /// the default limit.
    pub fn new(id: JobId, lab: LabId, user: UserId, num_gpus: u32, state: JobState, entered: Millis) -> Self {
        WorldJob {
            id,
            lab,
            user,
            num_gpus,
            min_vram_gb: 0,
            state,
            submitted_ms: entered,
            queue_entered_ms: entered,
            reservation: None,
            accrued: Accrued::default(),
            running: None,
            rank: None,
            reason: None,
            time_limit_ms: DEFAULT_TIME_LIMIT_MS,
            array: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct World {
    pub now: Millis,
    pub phase: MaintenancePhase,
    pub tiers: Vec<TierInfo>,
    pub placements: Vec<PlacementDef>,
    pub labs: BTreeMap<LabId, LabUsage>,
    pub max_concurrent: HashMap<UserId, u32>,
    pub jobs: BTreeMap<JobId, WorldJob>,
    /// Every charge ever made, in order.
    pub ledger: Vec<Charge>,
    /// GPUs running backfill, by (node, tier).
    pub backfill: HashMap<(String, String), Vec<u32>>,
    /// Concurrency limit of users not in `max_concurrent` (policy default 2).
    pub default_max_concurrent: u32,
    /// The rules `decide` applies.
    pub mode: PolicyMode,
    /// Arrays' `%N` limits.
    pub arrays: HashMap<ArrayId, u32>,
}

impl World {
    pub fn new(tiers: Vec<TierInfo>, placements: Vec<PlacementDef>) -> Self {
        World {
            now: 0,
            phase: MaintenancePhase::Normal,
            tiers,
            placements,
            labs: BTreeMap::new(),
            max_concurrent: HashMap::new(),
            jobs: BTreeMap::new(),
            ledger: Vec::new(),
            backfill: HashMap::new(),
            default_max_concurrent: 2,
            mode: PolicyMode::Seed,
            arrays: HashMap::new(),
        }
    }

    pub fn tier(&self, name: &str) -> &TierInfo {
        self.tiers.iter().find(|t| t.name == name).expect("known tier")
    }

    pub fn set_lab_usage(&mut self, lab: LabId, value: f64) {
        self.labs.insert(lab, LabUsage { lab, value, as_of_ms: self.now });
    }

    pub fn lab_usage(&self, lab: LabId) -> f64 {
        self.labs.get(&lab).map_or(0.0, |u| usage::decayed(u, self.now))
    }

    fn holding(&self, user: UserId) -> u32 {
        self.jobs.values().filter(|j| j.user == user && j.state.holds_slot()).count() as u32
    }

    /// Admits a job: global queue if its user has a free slot, else the
    /// personal queue (§3).
    pub fn submit(&mut self, id: JobId, lab: LabId, user: UserId, num_gpus: u32) {
        self.labs.entry(lab).or_insert(LabUsage { lab, value: 0.0, as_of_ms: self.now });
        let limit = *self.max_concurrent.entry(user).or_insert(self.default_max_concurrent);
        let state = if self.holding(user) < limit { JobState::GlobalQueueWait } else { JobState::UserQueueWait };
        self.jobs.insert(id, WorldJob::new(id, lab, user, num_gpus, state, self.now));
    }

    fn queued(j: &WorldJob) -> QueuedJob {
        QueuedJob {
            id: j.id,
            lab: j.lab,
            user: j.user,
            num_gpus: j.num_gpus,
            queue_entered_at_ms: j.queue_entered_ms,
            min_vram_gb: j.min_vram_gb,
            reservation: j.reservation.clone(),
            accrued: j.accrued,
            time_limit_ms: j.time_limit_ms,
        }
    }

    /// The limits of arrays with elements in a personal queue, with how
    /// many of their elements hold slots.
    fn array_limits(&self) -> Vec<ArrayLimit> {
        let mut limits: BTreeMap<ArrayId, ArrayLimit> = BTreeMap::new();
        if self.arrays.is_empty() {
            return Vec::new();
        }
        for j in self.jobs.values() {
            let Some((array, &max_running)) = j.array.and_then(|a| Some((a, self.arrays.get(&a)?))) else { continue };
            let limit = limits.entry(array).or_insert(ArrayLimit { array, max_running, holding: 0 });
            limit.holding += u32::from(j.state.holds_slot());
        }
        limits.into_values().collect()
    }

    /// Each placement's position in `placements`, by (node, tier).
    fn placement_index(&self) -> FxHashMap<(&str, &str), usize> {
        self.placements.iter().enumerate().map(|(i, p)| ((p.node.as_str(), p.tier.as_str()), i)).collect()
    }

    /// Whether any job waits in the global or a personal queue: with none,
    /// a cycle decides nothing (`tests::nothing_waiting_plans_nothing`).
    pub fn anyone_waiting(&self) -> bool {
        self.jobs.values().any(|j| matches!(j.state, JobState::GlobalQueueWait | JobState::UserQueueWait))
    }

    pub fn snapshot(&self) -> Snapshot {
        // (hashed once per placement, not per GPU: the simulator builds a
        // snapshot per event, and the string-keyed maps were a sixth of it)
        let index = self.placement_index();
        let mut busy: Vec<Vec<u32>> = vec![Vec::new(); self.placements.len()];
        // one walk of the jobs for all that is counted from them (six
        // walks were a tenth of a planned replay under overload)
        let mut users: FxHashMap<UserId, u32> = FxHashMap::default();
        let mut queue = Vec::with_capacity(self.jobs.len());
        let mut personal = Vec::new();
        let mut research_active = 0;
        for j in self.jobs.values() {
            if let Some(r) = &j.running {
                research_active += 1;
                if let Some(&i) = index.get(&(r.node.as_str(), r.tier.as_str())) {
                    busy[i].extend(&r.gpus);
                }
            }
            if j.state.holds_slot() {
                *users.entry(j.user).or_default() += 1;
            }
            match j.state {
                JobState::GlobalQueueWait => queue.push(Self::queued(j)),
                JobState::UserQueueWait => {
                    personal.push(PersonalJob { array: j.array, ..PersonalJob::plain(Self::queued(j), j.submitted_ms) })
                }
                _ => {}
            }
        }
        let placements = self
            .placements
            .iter()
            .zip(&busy)
            .map(|(p, used)| {
                let free: Vec<u32> = p.gpus.iter().copied().filter(|g| !used.contains(g)).collect();
                let backfill = if self.backfill.is_empty() {
                    Vec::new()
                } else {
                    self.backfill
                        .iter()
                        .find(|((node, tier), _)| *node == p.node && *tier == p.tier)
                        .map(|(_, b)| b.iter().copied().filter(|g| free.contains(g)).collect())
                        .unwrap_or_default()
                };
                PlacementState {
                    node: p.node.clone(),
                    tier: p.tier.clone(),
                    capacity: p.gpus.len() as u32,
                    usable: p.usable,
                    free,
                    backfill,
                }
            })
            .collect();
        Snapshot {
            now_ms: self.now,
            phase: self.phase,
            tiers: self.tiers.clone(),
            placements,
            labs: self.labs.values().copied().collect(),
            queue,
            personal,
            arrays: self.array_limits(),
            users: self
                .max_concurrent
                .iter()
                .map(|(&user, &max)| UserSlots {
                    user,
                    max_concurrent: max,
                    holding: users.get(&user).copied().unwrap_or(0),
                })
                .collect(),
            research_active,
            backfill_active: self.backfill.values().map(|b| b.len() as u32).sum(),
            mode: self.mode,
            busy_until: self.busy_until(&index),
        }
    }

    fn charge(&mut self, charges: impl IntoIterator<Item = Charge>) {
        for c in charges {
            let now = self.now;
            let lab = self.labs.entry(c.lab).or_insert(LabUsage { lab: c.lab, value: 0.0, as_of_ms: now });
            usage::add(lab, c.amount, now);
            self.ledger.push(c);
        }
    }

    /// Applies a plan; dispatched jobs start running at once.
    pub fn apply(&mut self, plan: &Plan) {
        if let Some(p) = plan.phase_change {
            self.phase = p;
        }
        for id in &plan.promotions {
            let job = self.jobs.get_mut(id).expect("promoted job exists");
            job.state = JobState::GlobalQueueWait;
            job.queue_entered_ms = self.now;
        }
        for (id, reason) in &plan.held {
            self.jobs.get_mut(id).expect("held job exists").reason = Some(reason.clone());
        }
        for id in &plan.never_satisfied {
            self.jobs.get_mut(id).expect("failed dependant exists").state = JobState::Cancelled;
        }
        self.charge(plan.charges.iter().cloned());
        for r in &plan.releases {
            let job = self.jobs.get_mut(&r.job).expect("released job exists");
            job.reservation = None;
            job.accrued = Accrued::default();
        }
        // by id, in one walk of the jobs: a lookup per row was an eighth
        // of a planned replay at 48×8 (thousands wait there each cycle)
        let mut rows: Vec<&Waiting> = plan.waiting.iter().collect();
        rows.sort_unstable_by_key(|w| w.job);
        let mut jobs = self.jobs.iter_mut().peekable();
        for w in rows {
            while jobs.next_if(|(&id, _)| id < w.job).is_some() {}
            let (_, job) = jobs.peek_mut().filter(|(&id, _)| id == w.job).expect("waiting job exists");
            job.rank = Some(w.rank);
            if job.reason.as_ref() != Some(&w.reason) {
                job.reason = Some(w.reason.clone());
            }
            job.reservation = w.reservation.clone();
            job.accrued = w.accrued;
        }
        for d in &plan.dispatches {
            if let Some(b) = self.backfill.get_mut(&(d.node.clone(), d.tier.clone())) {
                b.retain(|g| !d.reclaim_backfill.contains(g));
            }
            let job = self.jobs.get_mut(&d.job).expect("dispatched job exists");
            job.state = JobState::Running;
            job.rank = None;
            job.reason = None;
            job.reservation = None;
            job.accrued = d.accrued;
            job.running = Some(Running {
                node: d.node.clone(),
                tier: d.tier.clone(),
                gpus: d.gpus.clone(),
                started_ms: self.now,
                charged_until_ms: self.now,
            });
        }
    }

    /// One cycle: decide on the current state and apply the plan.
    pub fn cycle(&mut self) -> Plan {
        let plan = super::decide(&self.snapshot());
        self.apply(&plan);
        plan
    }

    /// Completes every job of `ends` (job → end time) due by now and
    /// forgets it there: virtual time reaching jobs' ends.
    pub fn end_due(&mut self, ends: &mut BTreeMap<JobId, Millis>) {
        let due: Vec<JobId> = ends.iter().filter(|(_, &at)| at <= self.now).map(|(&id, _)| id).collect();
        for id in due {
            ends.remove(&id);
            self.end(id, JobState::Completed);
        }
    }

    /// Ends a job in `state` and charges it (R4). Queued jobs with a live
    /// reservation accrue it to now first.
    pub fn end(&mut self, id: JobId, state: JobState) {
        let now = self.now;
        let Some(job) = self.jobs.get(&id) else { return };
        if job.state.is_terminal() {
            return;
        }
        let mut accrued = job.accrued;
        let mut res_tier = String::new();
        if let Some(mut res) = job.reservation.clone() {
            let tflops = self.tier(&res.tier).tflops;
            usage::accrue(&mut res, &mut accrued, tflops, now);
            res_tier = res.tier;
        }
        let run = job.running.as_ref().map(|r| RunSpan {
            tier: &r.tier,
            tflops: self.tier(&r.tier).tflops,
            gpus: r.gpus.len() as u32,
            started_ms: r.charged_until_ms,
            ended_ms: now,
        });
        if res_tier.is_empty() {
            res_tier = run.map(|r| r.tier.to_string()).unwrap_or_default();
        }
        let charges = usage::end_charges(job.lab, id, run, accrued, &res_tier);
        self.charge(charges);
        let job = self.jobs.get_mut(&id).expect("exists");
        job.state = state;
        job.running = None;
        job.reservation = None;
        job.accrued = Accrued::default();
        job.rank = None;
        job.reason = None;
    }
}

impl World {
    /// Charges every running job's run time up to now (the simulator's
    /// `--charge live`; the product charges at the end, R4).
    pub fn charge_running(&mut self) {
        let now = self.now;
        let mut charges = Vec::new();
        for job in self.jobs.values_mut() {
            if let Some(r) = job.running.as_mut() {
                let tflops = self.tiers.iter().find(|t| t.name == r.tier).map_or(0.0, |t| t.tflops);
                let span = RunSpan {
                    tier: &r.tier,
                    tflops,
                    gpus: r.gpus.len() as u32,
                    started_ms: r.charged_until_ms,
                    ended_ms: now,
                };
                charges.extend(usage::end_charges(job.lab, job.id, Some(span), Accrued::default(), &r.tier));
                r.charged_until_ms = r.charged_until_ms.max(now);
            }
        }
        self.charge(charges);
    }

    /// Each running job's GPUs with its limit's end; only `planned` reads
    /// them (the server's snapshot has them in that mode only, too).
    fn busy_until(&self, index: &FxHashMap<(&str, &str), usize>) -> Vec<BusyGpu> {
        if !matches!(self.mode, PolicyMode::Planned(_)) {
            return Vec::new();
        }
        let names: Vec<(Arc<str>, Arc<str>)> =
            self.placements.iter().map(|p| (Arc::from(p.node.as_str()), Arc::from(p.tier.as_str()))).collect();
        let running = || self.jobs.values().filter_map(|j| j.running.as_ref().map(|r| (j, r)));
        let mut busy = Vec::with_capacity(running().map(|(_, r)| r.gpus.len()).sum());
        for (j, r) in running() {
            let until = r.started_ms + j.time_limit_ms;
            let shared = match index.get(&(r.node.as_str(), r.tier.as_str())) {
                Some(&i) => (names[i].0.clone(), names[i].1.clone()),
                None => (Arc::from(r.node.as_str()), Arc::from(r.tier.as_str())),
            };
            let (node, tier) = (&shared.0, &shared.1);
            busy.extend(
                r.gpus.iter().map(|&gpu| BusyGpu::shared((node, tier), gpu, (j.lab, j.user), r.started_ms, until)),
            );
        }
        busy
    }

    /// GPUs neither running nor reserved, per placement (placement order).
    pub fn snapshot_free(&self) -> Vec<u32> {
        let index = self.placement_index();
        let mut busy = vec![0u32; self.placements.len()];
        let spans = self.jobs.values().flat_map(|j| {
            let running = j.running.as_ref().map(|r| (r.node.as_str(), r.tier.as_str(), r.gpus.len()));
            running.into_iter().chain(j.reservation.as_ref().map(|r| (r.node.as_str(), r.tier.as_str(), r.gpus.len())))
        });
        for (node, tier, n) in spans {
            if let Some(&i) = index.get(&(node, tier)) {
                busy[i] += n as u32;
            }
        }
        self.placements.iter().zip(busy).map(|(p, used)| (p.gpus.len() as u32).saturating_sub(used)).collect()
    }

    /// A running attempt hit a GPU OOM: charge it, then retry on a larger
    /// tier (keeping the slot and queue entry) or fail the job (§6).
    /// Returns whether the job was requeued.
    pub fn gpu_oom(&mut self, id: JobId, attempt: u32) -> bool {
        let Some(job) = self.jobs.get(&id) else { return false };
        let Some(run) = job.running.clone() else { return false };
        let vram = self.tier(&run.tier).vram_gb;
        let escalation = super::oom::escalate(&self.tiers, vram, job.num_gpus, attempt);
        let entered = job.queue_entered_ms;
        match escalation {
            super::oom::Escalation::Retry { min_vram_gb, .. } => {
                // charge the attempt like an end, then return to the queue
                self.end(id, JobState::Failed);
                let job = self.jobs.get_mut(&id).expect("exists");
                job.state = JobState::GlobalQueueWait;
                job.min_vram_gb = min_vram_gb;
                job.queue_entered_ms = entered;
                true
            }
            super::oom::Escalation::NoLargerTier => {
                self.end(id, JobState::Failed);
                false
            }
        }
    }
}
