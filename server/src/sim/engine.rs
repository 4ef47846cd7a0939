//! The replay loop. Virtual time jumps from event to event: at each
//! timestamp all job ends apply, then the submissions in file order, then
//! one scheduling pass; while a pass still changes something, another
//! follows `cycle_ms` later (a pass that changes nothing would change
//! nothing again until the next event, so the periodic passes after it are
//! skipped — exactly what production would decide, without the cost).
//! `jpu` runs the product's own `decide` through the in-memory `World`;
//! the baselines live in `baselines`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use rustc_hash::FxHashMap;

use app::model::{JobState, MaintenancePhase};

use super::baselines::{Baseline, BaselineKind};
use super::forecast::{schedule, Moment};
use super::outcome::{Estimate, Outcome};
use super::trace::TraceJob;
use crate::policy::backfill::{self, BackfillPolicy, GpuKey, Instance};
use crate::policy::model::{Millis, Snapshot};
use crate::policy::world::{PlacementDef, World};
use crate::policy::{decide, TierInfo};
use crate::policy::{forecast, predict};

#[derive(Debug, Clone, PartialEq)]
pub enum Policy {
    /// The product's policy; `live_charge` charges running jobs every pass.
    Jpu {
        live_charge: bool,
    },
    Fifo,
    Easy {
        overestimate: f64,
    },
    FairshareGreedy,
    /// The product's `planned` policy (§11).
    /// With the design it was asked as (`k=2,x=100`), if not the CLI's.
    Planned(crate::policy::PlannedParams, Option<String>),
}

/// `planned` with settings changed by `k=…,x=…,c=…` (`scheduler.plan_drains`,
/// `plan_drain_after_percent`, `plan_charge_drains`) and `d=…,w=…,l=…`
/// (`plan_depth`, `max_wait_hours`, `max_wait_lift_percent`), `p=…`
/// (`plan_lift_ahead_of_light`) and `e=…` (`plan_predicted_ends`); None if
/// it does not parse.
pub fn planned_design(base: crate::policy::PlannedParams, design: &str) -> Option<crate::policy::PlannedParams> {
    let mut params = base;
    for part in design.split(',') {
        let (key, value) = part.split_once('=')?;
        match key.trim() {
            "k" => params.drains = crate::config::PlanDrains::try_from(value.to_string()).ok()?.0,
            "x" => params.drain_after_percent = value.trim().parse().ok()?,
            "c" => params.charge_drains = value.trim().parse().ok()?,
            "d" => params.depth = value.trim().parse().ok()?,
            "w" => params.max_wait_ms = value.trim().parse::<i64>().ok()?.checked_mul(3_600_000)?,
            "l" => params.lift_percent = value.trim().parse().ok()?,
            "p" => params.lift_ahead_of_light = value.trim().parse().ok()?,
            "e" => params.predicted_ends = value.trim().parse().ok()?,
            _ => return None,
        }
    }
    Some(params)
}

/// How long users ask for (the trace has no time limits): `planned`
/// plans with these, and a job never runs past its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeLimitModel {
    /// Runtime × this (what EASY's `--overestimate` does).
    Times(f64),
    /// Runtime rounded up to the next of 1, 2, 4, 8, 12, 24, 48 and 72 h
    /// (past 72 h, to whole days): the round numbers users type.
    User,
}

impl TimeLimitModel {
    pub fn of(self, run_ms: i64) -> i64 {
        const HOUR: i64 = 3_600_000;
        match self {
            TimeLimitModel::Times(factor) => ((run_ms as f64 * factor).ceil() as i64).max(run_ms).max(1),
            TimeLimitModel::User => [1, 2, 4, 8, 12, 24, 48, 72]
                .iter()
                .map(|h| h * HOUR)
                .find(|&limit| limit >= run_ms)
                .unwrap_or_else(|| (run_ms + 24 * HOUR - 1) / (24 * HOUR) * 24 * HOUR),
        }
    }
}

impl Policy {
    /// The product's policies run the product's `decide` (and have its
    /// forecast); the baselines have neither.
    pub fn is_product(&self) -> bool {
        matches!(self, Policy::Jpu { .. } | Policy::Planned(..))
    }

    pub fn name(&self) -> String {
        match self {
            Policy::Jpu { live_charge: false } => "jpu".into(),
            Policy::Jpu { live_charge: true } => "jpu-live".into(),
            Policy::Fifo => "fifo".into(),
            Policy::Easy { .. } => "easy".into(),
            Policy::FairshareGreedy => "fairshare-greedy".into(),
            Policy::Planned(_, None) => "planned".into(),
            Policy::Planned(_, Some(design)) => format!("planned:{design}"),
        }
    }
}

/// How a replay runs; the default is the CLI's (5 s passes, lazy charge,
/// no user limit, no backfill, limits of twice the runtime, the server's
/// forecast margin).
#[derive(Debug, Clone)]
pub struct Options {
    pub cycle_ms: i64,
    /// Only event passes (for comparing with event-driven simulators).
    pub events_only: bool,
    /// Concurrency limit per user for `jpu` (trace users, or one user per
    /// lab); None = unlimited. The baselines have no personal queues.
    pub user_limit: Option<u32>,
    /// LLM backfill on idle GPUs (policy §7), decided by the product's own
    /// planner; `jpu` only (the baselines know nothing of it).
    pub backfill: Option<BackfillPolicy>,
    /// The time limits users set, for `planned` (and `jpu`, which ignores them).
    pub time_limit: TimeLimitModel,
    /// The forecast's margin when it is measured (the server's by default).
    pub forecast_margin: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            cycle_ms: 5_000,
            events_only: false,
            user_limit: None,
            backfill: None,
            time_limit: TimeLimitModel::Times(2.0),
            forecast_margin: crate::policy::forecast::ESTIMATE_MARGIN,
        }
    }
}

/// The cluster between two passes, for utilisation and idle accounting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub from_ms: i64,
    pub to_ms: i64,
    pub running_gpus: u32,
    pub reserved_gpus: u32,
    /// Neither running research nor reserved (backfill GPUs included).
    pub idle_gpus: u32,
    /// Serving LLM backfill.
    pub backfill_gpus: u32,
    /// Jobs were waiting during the interval.
    pub waiting: bool,
    /// Some waiting job would fit the idle count, but no single placement.
    pub fragmented: bool,
    /// Σ over labs |running GPUs − max-min fair share| / (2 × total GPUs):
    /// 0 = every lab runs exactly its fair share of the cluster.
    pub unfairness: f64,
}

#[derive(Debug, Clone)]
pub struct Replay {
    pub policy: String,
    pub outcomes: Vec<Outcome>,
    pub intervals: Vec<Interval>,
    pub total_gpus: u32,
    /// Wall-clock nanoseconds per pass (not part of the deterministic report).
    pub pass_nanos: Vec<u64>,
}

/// The state a policy keeps; the engine only asks these questions.
trait Cluster {
    fn submit(&mut self, id: i64, job: &TraceJob, lab: i64, user: i64);
    /// One pass; returns the jobs started and whether anything changed.
    fn pass(&mut self, now: i64) -> (Vec<i64>, bool);
    fn end(&mut self, id: i64, now: i64);
    /// What the interval since the last pass is measured by.
    fn census(&self) -> Census;
    fn backfill_gpus(&self) -> u32 {
        0
    }
    /// A time after `now` when a pass would change something although no
    /// event happens (a GPU reaching the backfill minimum idle time).
    fn wakeup_after(&self, _now: i64) -> Option<i64> {
        None
    }
    /// The product's forecast of the current state at `at` until `wanted`
    /// have estimates; None for a policy without one.
    fn forecast(&self, _at: i64, _wanted: &[i64]) -> Option<HashMap<i64, i64>> {
        None
    }
}

/// The cluster between two passes, counted in one walk of its jobs (one
/// per event: three walks and string-keyed look-ups were a seventh of a
/// planned replay, and an eighth at 48×8, where thousands wait).
#[derive(Debug, Default)]
pub struct Census {
    pub running: u32,
    pub reserved: u32,
    /// Waiting jobs' sizes.
    pub waiting: Vec<u32>,
    /// GPUs neither running nor reserved, per placement.
    pub free: Vec<u32>,
    /// Per lab: (GPUs running, GPUs demanded by running + waiting jobs).
    pub load: FxHashMap<i64, (u32, u32)>,
}

/// Max-min fair shares of `capacity` for these demands (water-filling).
pub fn max_min_shares(capacity: f64, demands: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by(|&a, &b| demands[a].total_cmp(&demands[b]));
    let mut shares = vec![0.0; demands.len()];
    let mut left = capacity;
    for (k, &i) in order.iter().enumerate() {
        let fair = left / (order.len() - k) as f64;
        shares[i] = demands[i].min(fair);
        left -= shares[i];
    }
    shares
}

fn unfairness(load: &FxHashMap<i64, (u32, u32)>, total: u32) -> f64 {
    let mut labs: Vec<(i64, (u32, u32))> = load.iter().map(|(k, v)| (*k, *v)).collect();
    labs.sort_unstable_by_key(|l| l.0);
    let demands: Vec<f64> = labs.iter().map(|l| f64::from(l.1 .1)).collect();
    let shares = max_min_shares(f64::from(total), &demands);
    let off: f64 = labs.iter().zip(&shares).map(|(l, f)| (f64::from(l.1 .0) - f).abs()).sum();
    off / (2.0 * f64::from(total.max(1)))
}

struct JpuCluster {
    world: World,
    live_charge: bool,
    backfill: Option<BackfillState>,
    time_limit: TimeLimitModel,
    forecast_margin: f64,
    /// What jobs ran, learnt as they end (the forecast's and the plan's
    /// predictor learns from them as the server's does).
    history: predict::RuntimeHistory,
    /// Each pass's snapshot, written over the last one's
    /// ([`World::snapshot_into`]).
    snap: Snapshot,
}

/// The loop's backfill bookkeeping (`scheduler::backfill`), in memory.
struct BackfillState {
    policy: BackfillPolicy,
    idle_since: HashMap<GpuKey, Millis>,
    instances: Vec<Instance>,
    next_id: i64,
}

impl BackfillState {
    /// Reclaims and deploys what the product's planner decides for this
    /// cycle; returns whether anything changed. In virtual time a reclaim
    /// is instant (a real instance takes up to the cancel grace).
    fn step(
        &mut self,
        world: &mut World,
        snap: &crate::policy::model::Snapshot,
        plan: &crate::policy::model::Plan,
    ) -> bool {
        backfill::track_idle(&mut self.idle_since, snap, plan);
        let decided = backfill::plan_backfill(snap, plan, &self.instances, &self.idle_since, &self.policy);
        self.instances.retain(|i| !decided.reclaim.contains(&i.id));
        for (node, tier, gpus) in &decided.deploy {
            self.next_id += 1;
            self.instances.push(Instance {
                id: self.next_id,
                node: node.clone(),
                tier: tier.clone(),
                gpus: gpus.clone(),
            });
        }
        world.backfill.clear();
        for i in &self.instances {
            world.backfill.entry((i.node.clone(), i.tier.clone())).or_default().extend(&i.gpus);
        }
        !decided.reclaim.is_empty() || !decided.deploy.is_empty()
    }

    fn next_deploy_after(&self, now: Millis) -> Option<Millis> {
        let serving: std::collections::HashSet<GpuKey> =
            self.instances.iter().flat_map(|i| i.gpus.iter().map(|g| (i.node.clone(), i.tier.clone(), *g))).collect();
        self.idle_since
            .iter()
            .filter(|(k, _)| !serving.contains(*k))
            .map(|(_, since)| since + self.policy.min_idle_ms)
            .filter(|&t| t > now)
            .min()
    }
}

impl Cluster for JpuCluster {
    fn submit(&mut self, id: i64, job: &TraceJob, lab: i64, user: i64) {
        self.world.submit(id, lab, user, job.num_gpus);
        if let Some(j) = self.world.jobs.get_mut(&id) {
            j.time_limit_ms = self.time_limit.of(job.duration_ms);
        }
    }

    fn pass(&mut self, now: i64) -> (Vec<i64>, bool) {
        self.world.now = now;
        if self.live_charge {
            self.world.charge_running();
        }
        // with nobody waiting the cycle decides nothing (a property test
        // in `policy::proptests_snap`): on a cluster with room most events
        // are such, and their snapshots were two-fifths of the replay at 80×8
        if self.backfill.is_none() && self.world.phase == MaintenancePhase::Normal && !self.world.anyone_waiting() {
            return (Vec::new(), false);
        }
        let snap = &mut self.snap;
        self.world.snapshot_into(snap);
        // only waiting jobs hold GPUs (a start, an end and a release clear
        // a hold): the first hold is found among them and the plan's, not
        // by two walks of every job (a twentieth of a replay at 48×8)
        let held: Vec<i64> = snap
            .queue
            .iter()
            .chain(snap.personal.iter().map(|p| &p.job))
            .filter(|j| j.reservation.is_some())
            .map(|j| j.id)
            .collect();
        let before = first_hold(&self.world, held.iter().copied());
        if snap.mode.predicts_ends() {
            predict::predict_busy(&mut snap.busy_until, &self.history, now);
        }
        let plan = decide(snap);
        self.world.apply(&plan);
        let backfill_changed = self.backfill.as_mut().is_some_and(|b| b.step(&mut self.world, snap, &plan));
        let holding = plan.waiting.iter().filter(|w| w.reservation.is_some()).map(|w| w.job);
        let after = first_hold(&self.world, held.into_iter().chain(holding));
        let changed = backfill_changed
            || !plan.dispatches.is_empty()
            || !plan.promotions.is_empty()
            || !plan.releases.is_empty()
            || !plan.charges.is_empty()
            || before != after;
        (plan.dispatches.iter().map(|d| d.job).collect(), changed)
    }

    fn end(&mut self, id: i64, now: i64) {
        self.world.now = now;
        if let Some((user, ended)) = self
            .world
            .jobs
            .get(&id)
            .and_then(|j| j.running.as_ref().map(|r| (j.user, (now - r.started_ms, j.time_limit_ms))))
        {
            self.history.record(user, ended.0, ended.1);
        }
        self.world.end(id, JobState::Completed);
        self.world.jobs.remove(&id);
    }

    fn census(&self) -> Census {
        let world = &self.world;
        let mut census =
            Census { free: world.placements.iter().map(|p| p.gpus.len() as u32).collect(), ..Census::default() };
        let mut take = |at: Option<usize>, n: usize| {
            if let Some(free) = at.and_then(|i| census.free.get_mut(i)) {
                *free = free.saturating_sub(n as u32);
            }
        };
        for j in world.jobs.values() {
            let load = census.load.entry(j.lab).or_default();
            load.1 += j.num_gpus;
            match &j.running {
                Some(r) => {
                    census.running += r.gpus.len() as u32;
                    load.0 += r.gpus.len() as u32;
                    take(r.slot, r.gpus.len());
                }
                None => census.waiting.push(j.num_gpus),
            }
            if let Some(r) = &j.reservation {
                census.reserved += r.gpus.len() as u32;
                take(world.slot(&r.node, &r.tier), r.gpus.len());
            }
        }
        census
    }

    fn backfill_gpus(&self) -> u32 {
        self.backfill.as_ref().map_or(0, |b| b.instances.iter().map(|i| i.gpus.len() as u32).sum())
    }

    fn wakeup_after(&self, now: i64) -> Option<i64> {
        self.backfill.as_ref().and_then(|b| b.next_deploy_after(now))
    }

    fn forecast(&self, at: i64, wanted: &[i64]) -> Option<HashMap<i64, i64>> {
        let mut snapshot = self.world.snapshot();
        snapshot.now_ms = at;
        let running = forecast::running_of(&self.world);
        let input = forecast::ForecastInput {
            snapshot: &snapshot,
            running: &running,
            depth: forecast::FORECAST_DEPTH,
            max_events: forecast::FORECAST_EVENTS,
            wanted: Some(wanted),
            history: &self.history,
            margin: self.forecast_margin,
            array_of: &HashMap::new(),
        };
        Some(forecast::forecast(&input))
    }
}

/// The hold of the lowest id among `jobs` that hold GPUs: (id, GPUs held).
fn first_hold(world: &World, jobs: impl Iterator<Item = i64>) -> Option<(i64, usize)> {
    jobs.filter_map(|id| world.jobs.get(&id)?.reservation.as_ref().map(|r| (id, r.gpus.len()))).min()
}

impl Cluster for Baseline {
    fn submit(&mut self, id: i64, job: &TraceJob, lab: i64, _user: i64) {
        self.enqueue(id, lab, job.num_gpus, job.submit_ms, job.duration_ms);
    }
    fn pass(&mut self, now: i64) -> (Vec<i64>, bool) {
        let started = self.schedule(now);
        let changed = !started.is_empty();
        (started, changed)
    }
    fn end(&mut self, id: i64, now: i64) {
        self.finish(id, now);
    }
    fn census(&self) -> Census {
        Census {
            running: self.running_gpus(),
            reserved: 0,
            waiting: self.waiting_sizes(),
            free: self.free_per_placement(),
            load: self.lab_load(),
        }
    }
}

/// Records the forecast at `at` of `wanted` (trace indices) at its moment.
fn ask_forecast(cluster: &dyn Cluster, at: i64, wanted: &[(usize, Moment)], outcomes: &mut [Outcome]) {
    let ids: Vec<i64> = wanted.iter().map(|&(i, _)| i as i64).collect();
    let Some(starts) = cluster.forecast(at, &ids) else { return };
    for &(i, moment) in wanted {
        let estimate = starts.get(&(i as i64)).map_or(Estimate::Missing, |&s| Estimate::At(s));
        match moment {
            Moment::Submission => outcomes[i].estimate_at_submit = estimate,
            Moment::HourBefore => outcomes[i].estimate_hour_before = estimate,
        }
    }
}

/// Can a job of `n` GPUs ever run on this cluster?
fn ever_fits(tiers: &[TierInfo], placements: &[PlacementDef], n: u32) -> bool {
    placements.iter().any(|p| {
        let max = tiers.iter().find(|t| t.name == p.tier).map_or(0, |t| t.max_gpus);
        n <= p.gpus.len() as u32 && n <= max
    })
}

pub fn replay(
    trace: &[TraceJob],
    tiers: &[TierInfo],
    placements: &[PlacementDef],
    policy: Policy,
    opts: Options,
    progress: impl FnMut(usize),
) -> Replay {
    run(trace, tiers, placements, policy, opts, None, progress)
}

/// The same replay again, asking the product's forecast (§11) about
/// every job right after its submission and one hour before the start
/// `first` (the plain replay) gave it. The forecast never changes the
/// state, so every job starts as in `first`.
pub fn replay_forecasting(
    trace: &[TraceJob],
    tiers: &[TierInfo],
    placements: &[PlacementDef],
    policy: Policy,
    opts: Options,
    first: &Replay,
    progress: impl FnMut(usize),
) -> Replay {
    let tick = opts.cycle_ms * forecast::FORECAST_EVERY as i64;
    let asks = schedule(&first.outcomes, tick);
    run(trace, tiers, placements, policy, opts, Some(&asks), progress)
}

fn run(
    trace: &[TraceJob],
    tiers: &[TierInfo],
    placements: &[PlacementDef],
    policy: Policy,
    opts: Options,
    asks: Option<&[(i64, usize, Moment)]>,
    mut progress: impl FnMut(usize),
) -> Replay {
    let total_gpus: u32 = placements.iter().map(|p| p.gpus.len() as u32).sum();
    let mut cluster: Box<dyn Cluster> = match policy {
        Policy::Jpu { .. } | Policy::Planned(..) => {
            let live_charge = matches!(policy, Policy::Jpu { live_charge: true });
            let mut world = World::new(tiers.to_vec(), placements.to_vec());
            world.keep_ledger = false;
            if let Policy::Planned(params, _) = &policy {
                world.mode = crate::policy::PolicyMode::Planned(*params);
            }
            // without a limit, each trace user may have every job in the global queue
            world.default_max_concurrent = opts.user_limit.unwrap_or(u32::MAX);
            let backfill = opts.backfill.clone().filter(|p| p.enabled).map(|policy| BackfillState {
                policy,
                idle_since: HashMap::new(),
                instances: Vec::new(),
                next_id: 0,
            });
            Box::new(JpuCluster {
                snap: world.snapshot(),
                world,
                live_charge,
                backfill,
                time_limit: opts.time_limit,
                forecast_margin: opts.forecast_margin,
                history: predict::RuntimeHistory::default(),
            })
        }
        Policy::Fifo => Box::new(Baseline::new(tiers, placements, BaselineKind::Fifo)),
        Policy::Easy { overestimate } => {
            Box::new(Baseline::new(tiers, placements, BaselineKind::Easy { overestimate }))
        }
        Policy::FairshareGreedy => Box::new(Baseline::new(tiers, placements, BaselineKind::FairshareGreedy)),
    };
    // ids: lab and user numbers in order of first appearance
    let mut labs: HashMap<&str, i64> = HashMap::new();
    let mut users: HashMap<(&str, &str), i64> = HashMap::new();
    let mut order: Vec<usize> = (0..trace.len()).collect();
    order.sort_by_key(|&i| (trace[i].submit_ms, i)); // stable: file order within a timestamp
    let mut outcomes: Vec<Outcome> = trace
        .iter()
        .map(|j| Outcome {
            lab: j.lab.clone(),
            num_gpus: j.num_gpus,
            submit_ms: j.submit_ms,
            run_ms: j.duration_ms,
            start_ms: None,
            rejected: false,
            estimate_at_submit: Estimate::NotAsked,
            estimate_hour_before: Estimate::NotAsked,
        })
        .collect();
    let mut asks = asks.unwrap_or_default().iter().peekable();

    let mut ends: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut next_submit = 0usize;
    let mut next_pass: Option<i64> = None;
    let mut intervals = Vec::new();
    let mut pass_nanos = Vec::new();
    let mut last_t: Option<i64> = None;
    let mut done = 0usize;

    loop {
        let t_submit = order.get(next_submit).map(|&i| trace[i].submit_ms);
        let t_end = ends.peek().map(|Reverse((t, _))| *t);
        let Some(t) = [t_submit, t_end, next_pass].into_iter().flatten().min() else { break };

        // the state is the last pass's until t: the forecasts of the
        // ticks in between
        while let Some(&&(at, _, _)) = asks.peek().filter(|a| a.0 < t) {
            let mut wanted = Vec::new();
            while let Some(&(_, i, moment)) = asks.next_if(|a| a.0 == at) {
                wanted.push((i, moment));
            }
            ask_forecast(&*cluster, at, &wanted, &mut outcomes);
        }
        // the cluster was constant since the last pass
        if let Some(from) = last_t {
            if t > from {
                let Census { running, reserved, waiting, free, load } = cluster.census();
                let idle = total_gpus.saturating_sub(running + reserved);
                let max_place = free.iter().copied().max().unwrap_or(0);
                let fragmented = waiting.iter().any(|&n| n <= idle && n > max_place);
                intervals.push(Interval {
                    from_ms: from,
                    to_ms: t,
                    running_gpus: running,
                    reserved_gpus: reserved,
                    idle_gpus: idle,
                    backfill_gpus: cluster.backfill_gpus(),
                    waiting: !waiting.is_empty(),
                    fragmented,
                    unfairness: unfairness(&load, total_gpus),
                });
            }
        }
        while let Some(Reverse((te, i))) = ends.peek().copied() {
            if te != t {
                break;
            }
            ends.pop();
            cluster.end(i as i64, t);
            done += 1;
        }
        while let Some(&i) = order.get(next_submit) {
            if trace[i].submit_ms != t {
                break;
            }
            next_submit += 1;
            let job = &trace[i];
            if !ever_fits(tiers, placements, job.num_gpus) {
                outcomes[i].rejected = true;
                done += 1;
                continue;
            }
            let n = labs.len() as i64;
            let lab = *labs.entry(job.lab.as_str()).or_insert(n);
            let n = users.len() as i64;
            let user = *users.entry((job.lab.as_str(), job.user.as_str())).or_insert(n);
            cluster.submit(i as i64, job, lab, user);
        }
        let started_at = Instant::now();
        let (started, changed) = cluster.pass(t);
        pass_nanos.push(started_at.elapsed().as_nanos() as u64);
        for id in started {
            let i = id as usize;
            outcomes[i].start_ms = Some(t);
            ends.push(Reverse((t + trace[i].duration_ms, i)));
        }
        let periodic = (changed && !opts.events_only).then_some(t + opts.cycle_ms);
        // a GPU reaching the minimum idle time is seen by the next 5 s
        // cycle in production, not at the exact millisecond
        let wakeup = cluster.wakeup_after(t).map(|w| {
            if opts.events_only {
                w
            } else {
                t + (w - t + opts.cycle_ms - 1) / opts.cycle_ms * opts.cycle_ms
            }
        });
        next_pass = [periodic, wakeup].into_iter().flatten().min();
        last_t = Some(t);
        progress(done);
    }
    Replay { policy: policy.name(), outcomes, intervals, total_gpus, pass_nanos }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::cluster;

    fn job(n: i64, submit_s: i64, run_s: i64, gpus: u32, lab: &str) -> TraceJob {
        TraceJob {
            name: format!("t-{n}"),
            number: n,
            submit_ms: submit_s * 1000,
            duration_ms: run_s * 1000,
            num_gpus: gpus,
            lab: lab.into(),
            user: String::new(),
        }
    }

    fn starts(spec: &str, trace: &[TraceJob], policy: Policy) -> Vec<Option<i64>> {
        let (tiers, places) = cluster::parse(spec).unwrap();
        let opts = Options::default();
        let r = replay(trace, &tiers, &places, policy, opts, |_| {});
        r.outcomes.iter().map(|o| o.start_ms.map(|ms| ms / 1000)).collect()
    }

    #[test]
    fn fifo_blocks_behind_the_head_and_easy_backfills_around_it() {
        let trace = [job(1, 0, 100, 3, "a"), job(2, 1, 10, 4, "a"), job(3, 2, 10, 1, "a")];
        assert_eq!(starts("1x4:v100", &trace, Policy::Fifo), [Some(0), Some(100), Some(110)]);
        // the 1-GPU job ends (t=12) before the head's shadow time (t=100)
        assert_eq!(starts("1x4:v100", &trace, Policy::Easy { overestimate: 1.0 }), [Some(0), Some(100), Some(2)]);
        // a long small job would still run at the head's shadow time and
        // needs the head's GPUs: no backfill
        let long = [job(1, 0, 100, 3, "a"), job(2, 1, 10, 4, "a"), job(3, 2, 200, 1, "a")];
        assert_eq!(starts("1x4:v100", &long, Policy::Easy { overestimate: 1.0 }), [Some(0), Some(100), Some(110)]);
    }

    #[test]
    fn a_two_gpu_job_starves_under_fairshare_greedy_but_not_under_jpu() {
        // lab a keeps both GPUs busy with staggered 1-GPU jobs; lab b wants 2
        let mut trace = vec![job(0, 0, 100, 1, "a"), job(1, 0, 150, 1, "a")];
        for n in 2..30 {
            trace.push(job(n, 0, 100, 1, "a"));
        }
        trace.push(job(99, 1, 10, 2, "b"));
        let greedy = starts("1x2:v100", &trace, Policy::FairshareGreedy);
        let jpu = starts("1x2:v100", &trace, Policy::Jpu { live_charge: false });
        let b = trace.len() - 1;
        assert!(greedy[b].unwrap() >= 1000, "greedy starves it: {:?}", greedy[b]);
        // a's first job ends at 100 and is charged: b is rank 1, reserves the
        // freed GPU, absorbs the second at 150 and starts
        assert_eq!(jpu[b], Some(150));
    }

    #[test]
    fn backfill_fills_idle_gpus_after_the_minimum_idle_time_and_yields_to_research() {
        let (tiers, places) = cluster::parse("1x2:v100").unwrap();
        let trace = [job(1, 0, 1000, 1, "a"), job(2, 500, 100, 2, "b")];
        let policy = BackfillPolicy { enabled: true, min_idle_ms: 60_000, gpus_per_instance: 1 };
        let opts = Options { backfill: Some(policy), ..Options::default() };
        let r = replay(&trace, &tiers, &places, Policy::Jpu { live_charge: false }, opts, |_| {});
        // research is never delayed by backfill: the 2-GPU job reserves GPU 1
        // at 500 (its instance keeps serving) and starts when job 1 ends
        assert_eq!(r.outcomes.iter().map(|o| o.start_ms).collect::<Vec<_>>(), [Some(0), Some(1_000_000)]);
        let served = |from: i64, to: i64| -> i64 {
            r.intervals
                .iter()
                .map(|iv| i64::from(iv.backfill_gpus) * (iv.to_ms.min(to) - iv.from_ms.max(from)).max(0))
                .sum()
        };
        // GPU 1 idle from 0: one instance from 60 s until the dispatch at 1000 s
        assert_eq!(served(0, 1_000_000), 940_000);
        assert_eq!(served(1_000_000, 1_100_000), 0, "both GPUs are research's while job 2 runs");
        // after job 2 ends (1100 s) both GPUs idle; instances come 60 s later
        assert!(
            r.intervals.iter().any(|iv| iv.from_ms == 1_160_000 && iv.backfill_gpus == 2),
            "{:?}",
            r.intervals.last()
        );
        let off = replay(
            &trace,
            &tiers,
            &places,
            Policy::Jpu { live_charge: false },
            Options { backfill: None, ..opts_plain() },
            |_| {},
        );
        assert!(off.intervals.iter().all(|iv| iv.backfill_gpus == 0));
        assert_eq!(off.outcomes.iter().map(|o| o.start_ms).collect::<Vec<_>>(), [Some(0), Some(1_000_000)]);
    }

    fn with_margin(ahead: i64) -> i64 {
        (ahead as f64 * forecast::ESTIMATE_MARGIN) as i64
    }

    fn opts_plain() -> Options {
        Options::default()
    }

    /// One GPU busy for two hours; a job behind it waits. With limits
    /// equal to run times the forecast knows the future exactly; with
    /// limits twice as long (and no ends to learn from) it expects the GPU
    /// later than it frees. Estimates carry the margin (a share of how far
    /// ahead they are, at the 30 s tick after submission and an hour before.
    #[test]
    fn the_forecast_is_asked_at_submission_and_an_hour_before_the_start() {
        let (tiers, places) = cluster::parse("1x1:v100").unwrap();
        let trace = [job(0, 0, 7200, 1, "a"), job(1, 1, 100, 1, "b")];
        for policy in [
            Policy::Jpu { live_charge: false },
            Policy::Planned(
                crate::policy::PlannedParams {
                    max_wait_ms: i64::MAX,
                    lift_percent: 100,
                    ..crate::config::SchedulerSettings::default().planned_params()
                },
                None,
            ),
        ] {
            let shown = |start: i64, asked: i64| Estimate::At(start + with_margin(start - asked));
            for (factor, start) in [(1.0, 7_200_000), (2.0, 14_400_000)] {
                let (at_submit, before) = (shown(start, 30_000), shown(start, 3_600_000));
                let opts = Options { time_limit: TimeLimitModel::Times(factor), ..opts_plain() };
                let first = replay(&trace, &tiers, &places, policy.clone(), opts.clone(), |_| {});
                let second = replay_forecasting(&trace, &tiers, &places, policy.clone(), opts, &first, |_| {});
                let starts = |r: &Replay| r.outcomes.iter().map(|o| o.start_ms).collect::<Vec<_>>();
                assert_eq!(starts(&first), starts(&second), "asking the forecast changes nothing");
                assert_eq!(starts(&second), [Some(0), Some(7_200_000)]);
                let waiting = &second.outcomes[1];
                assert_eq!(waiting.estimate_at_submit, at_submit, "{policy:?} x{factor}");
                assert_eq!(waiting.estimate_hour_before, before, "{policy:?} x{factor}");
                let started_at_once = &second.outcomes[0];
                assert_eq!(started_at_once.estimate_at_submit, Estimate::NotAsked);
                assert_eq!(first.outcomes[1].estimate_at_submit, Estimate::NotAsked, "the plain replay asks nothing");
            }
        }
        let easy = Policy::Easy { overestimate: 2.0 };
        let first = replay(&trace, &tiers, &places, easy.clone(), opts_plain(), |_| {});
        let second = replay_forecasting(&trace, &tiers, &places, easy, opts_plain(), &first, |_| {});
        assert_eq!(second.outcomes[1].estimate_at_submit, Estimate::NotAsked, "a baseline has no forecast");
    }

    /// Lab a's first job used half its limit; the forecast expects its
    /// second to do the same, so lab b's job, behind it, is estimated at
    /// 7,200 s (plus the margin), not at the second job's limit end.
    #[test]
    fn the_forecast_learns_from_ends_in_the_replay() {
        let (tiers, places) = cluster::parse("1x1:v100").unwrap();
        let trace = [job(0, 0, 3600, 1, "a"), job(1, 0, 3600, 1, "a"), job(2, 3601, 10, 1, "b")];
        let first = replay(&trace, &tiers, &places, Policy::Jpu { live_charge: false }, opts_plain(), |_| {});
        let second = replay_forecasting(
            &trace,
            &tiers,
            &places,
            Policy::Jpu { live_charge: false },
            opts_plain(),
            &first,
            |_| {},
        );
        assert_eq!(second.outcomes[2].start_ms, Some(7_200_000));
        assert_eq!(second.outcomes[2].estimate_at_submit, Estimate::At(7_200_000 + with_margin(7_200_000 - 3_630_000)));
    }

    #[test]
    fn max_min_shares_fill_small_demands_first() {
        assert_eq!(max_min_shares(10.0, &[2.0, 8.0, 8.0]), vec![2.0, 4.0, 4.0]);
        assert_eq!(max_min_shares(10.0, &[1.0, 1.0]), vec![1.0, 1.0]);
        let mut load = FxHashMap::default();
        load.insert(1, (4, 8));
        load.insert(2, (4, 8));
        assert_eq!(unfairness(&load, 8), 0.0);
        load.insert(2, (0, 8));
        load.insert(1, (8, 8));
        assert_eq!(unfairness(&load, 8), 0.5, "one lab holds the other's whole share");
    }

    #[test]
    fn jobs_larger_than_any_placement_are_rejected_not_dropped() {
        let trace = [job(1, 0, 10, 16, "a"), job(2, 0, 10, 1, "a")];
        for policy in [Policy::Fifo, Policy::FairshareGreedy, Policy::Jpu { live_charge: false }] {
            assert_eq!(starts("2x8:v100", &trace, policy), [None, Some(0)]);
        }
    }
}
