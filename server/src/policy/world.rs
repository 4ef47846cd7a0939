//! An in-memory cluster that applies plans: the bookkeeping around
//! [`decide`](super::decide) without a database, in virtual time. Tests
//! and the simulator drive it; it holds state, never policy.

use std::collections::{BTreeMap, HashMap};

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
    /// Its placement's position in [`World::placements`] ([`World::slot`]
    /// of `node`, `tier`; `None`: not a placement of the world): a
    /// snapshot finds its busy GPUs without hashing names (per running job
    /// per event, a tenth of a planned replay at 80×8).
    pub slot: Option<usize>,
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
    /// Every charge ever made, in order (while `keep_ledger`).
    pub ledger: Vec<Charge>,
    /// Whether charges are kept in `ledger`: the simulator reads lab
    /// usage, never the ledger, and a month's drains charge every cycle.
    pub keep_ledger: bool,
    /// GPUs running backfill, by (node, tier).
    pub backfill: HashMap<(String, String), Vec<u32>>,
    /// Concurrency limit of users not in `max_concurrent` (policy default 2).
    pub default_max_concurrent: u32,
    /// The rules `decide` applies.
    pub mode: PolicyMode,
    /// Arrays' `%N` limits.
    pub arrays: HashMap<ArrayId, u32>,
    /// `placements` by node, made once instead of per snapshot.
    index: FxHashMap<String, Vec<usize>>,
}

impl World {
    pub fn new(tiers: Vec<TierInfo>, placements: Vec<PlacementDef>) -> Self {
        let mut index: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for (i, p) in placements.iter().enumerate() {
            index.entry(p.node.clone()).or_default().push(i);
        }
        World {
            index,
            now: 0,
            phase: MaintenancePhase::Normal,
            tiers,
            placements,
            labs: BTreeMap::new(),
            max_concurrent: HashMap::new(),
            jobs: BTreeMap::new(),
            ledger: Vec::new(),
            keep_ledger: true,
            backfill: HashMap::new(),
            default_max_concurrent: 2,
            mode: PolicyMode::Seed,
            arrays: HashMap::new(),
        }
    }

    /// The position of the placement (node, tier) in `placements`.
    pub fn slot(&self, node: &str, tier: &str) -> Option<usize> {
        let named = |i: &usize| self.placements.get(*i).is_some_and(|p| p.node == node && p.tier == tier);
        // (a placement added after the world was made is not in the index)
        let indexed = self.index.get(node).and_then(|slots| slots.iter().copied().find(named));
        indexed.or_else(|| (0..self.placements.len()).find(named))
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
        // (no limit: no walk of every job to count the user's)
        let free = limit == u32::MAX || self.holding(user) < limit;
        let state = if free { JobState::GlobalQueueWait } else { JobState::UserQueueWait };
        self.jobs.insert(id, WorldJob::new(id, lab, user, num_gpus, state, self.now));
    }

    fn charge<'c>(&mut self, charges: impl IntoIterator<Item = &'c Charge>) {
        for c in charges {
            let now = self.now;
            let lab = self.labs.entry(c.lab).or_insert(LabUsage { lab: c.lab, value: 0.0, as_of_ms: now });
            usage::add(lab, c.amount, now);
            if self.keep_ledger {
                self.ledger.push(c.clone());
            }
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
        self.charge(&plan.charges);
        for r in &plan.releases {
            let job = self.jobs.get_mut(&r.job).expect("released job exists");
            job.reservation = None;
            job.accrued = Accrued::default();
        }
        // by id, in one walk of the jobs: a lookup per row was an eighth
        // of a planned replay at 48×8 (thousands wait there each cycle)
        // (sorting ids, not references to the rows: a reference per
        // comparison was a twentieth of a planned replay at 48×8)
        let mut rows: Vec<(JobId, usize)> = plan.waiting.iter().enumerate().map(|(k, w)| (w.job, k)).collect();
        // stable: the fair-share order is a run of ascending ids per lab
        // usage, which a run-merging sort takes in a few passes
        rows.sort();
        let mut jobs = self.jobs.iter_mut().peekable();
        for w in rows.into_iter().map(|(_, k)| &plan.waiting[k]) {
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
            // (no names copied for the look-up while nothing backfills)
            if !self.backfill.is_empty() {
                if let Some(b) = self.backfill.get_mut(&(d.node.clone(), d.tier.clone())) {
                    b.retain(|g| !d.reclaim_backfill.contains(g));
                }
            }
            let slot = self.slot(&d.node, &d.tier);
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
                slot,
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
        self.charge(&charges);
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
        self.charge(&charges);
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
