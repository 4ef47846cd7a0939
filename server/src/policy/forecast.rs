//! The start-time forecast (policy §11): the live state run forward
//! through the same [`decide`](super::decide) in virtual time. Jobs end
//! when the runtime predictor ([`super::predict`]) expects, or at their
//! time limits for users without history; nothing new arrives; each
//! waiting job's estimate is the virtual time it was dispatched, plus a
//! margin for the arrivals it cannot know. It is an estimate and shown as
//! one.
//!
//! Bounded: only the first `depth` jobs of the fair-share order (and the
//! heads of personal queues) are carried forward, for at most
//! `max_events` end times — jobs further back get no estimate rather than
//! a slow one.
//!
//! The guide below (rendered by `cargo doc`) is the reference: how it
//! works, the decisions it makes where the policy is silent, the measurements.
#![doc = include_str!("forecast.md")]

use std::collections::{BTreeMap, HashMap, HashSet};

use app::model::{JobState, MaintenancePhase};

use super::model::*;
use super::predict::{RuntimeHistory, FUTURE_QUANTILE, RUNNING_QUANTILE};
use super::world::{PlacementDef, Running, World, WorldJob, DEFAULT_TIME_LIMIT_MS};

/// The loop forecasts every this many cycles (30 s at the default 5 s
/// cycle); the simulator asks at the same ticks.
pub const FORECAST_EVERY: u64 = 6;
/// Jobs carried forward: the head of the fair-share order. 10,000 took
/// about a second on this 2-core machine (`benches/decide.rs`); 500 of
/// them take tens of milliseconds and cover any queue a user looks at
/// the top of.
pub const FORECAST_DEPTH: usize = 500;
/// End times looked at, at most.
pub const FORECAST_EVENTS: usize = 5_000;

/// A research job holding GPUs now.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningJob {
    pub id: JobId,
    pub lab: LabId,
    pub user: UserId,
    pub node: String,
    pub tier: String,
    pub gpus: Vec<u32>,
    pub started_ms: Millis,
    /// When its time limit ends it at the latest.
    pub ends_ms: Millis,
}

pub struct ForecastInput<'a> {
    pub snapshot: &'a Snapshot,
    pub running: &'a [RunningJob],
    pub depth: usize,
    pub max_events: usize,
    /// Stop once these jobs have an estimate (None: every job reached).
    /// The simulator asks for one job's estimate thousands of times; the
    /// rest of the queue's future is not needed for it.
    pub wanted: Option<&'a [JobId]>,
    /// How long users' jobs ran ([`super::predict`]); users without
    /// history run to their limits.
    pub history: &'a RuntimeHistory,
    /// Estimates are later than the forecast's starts by this share of
    /// how far ahead they are ([`ESTIMATE_MARGIN`] in production; 0 gives
    /// the forecast's own times).
    pub margin: f64,
    /// The array of each running or queued job that is an array element
    /// (elements in personal queues carry theirs): an array's `%N` counts
    /// them.
    pub array_of: &'a HashMap<JobId, ArrayId>,
}

/// Estimated start of each waiting job the forecast reached.
pub fn forecast(input: &ForecastInput<'_>) -> HashMap<JobId, Millis> {
    let snap = input.snapshot;
    // nothing is dispatched until an admin ends maintenance: no estimate
    if snap.phase != MaintenancePhase::Normal {
        return HashMap::new();
    }
    let mut world = world_of(input);
    let mut pending: HashSet<JobId> = match input.wanted {
        // a wanted job beyond the depth is not in the world: never started
        Some(wanted) => wanted.iter().copied().filter(|id| world.jobs.contains_key(id)).collect(),
        None => world.jobs.values().filter(|j| !j.state.is_terminal() && j.running.is_none()).map(|j| j.id).collect(),
    };
    let history = input.history;
    let mut ends: BTreeMap<JobId, Millis> = input
        .running
        .iter()
        .map(|r| {
            (r.id, history.predicted_end(r.user, r.started_ms, r.ends_ms - r.started_ms, snap.now_ms, RUNNING_QUANTILE))
        })
        .collect();
    let mut starts: HashMap<JobId, Millis> = HashMap::new();
    for _ in 0..input.max_events {
        let plan = world.cycle();
        for d in &plan.dispatches {
            starts.insert(d.job, world.now + ((world.now - snap.now_ms).max(0) as f64 * input.margin) as Millis);
            pending.remove(&d.job);
            let (limit, user) =
                world.jobs.get(&d.job).map_or((DEFAULT_TIME_LIMIT_MS, 0), |j| (j.time_limit_ms, j.user));
            ends.insert(d.job, history.predicted_end(user, world.now, limit.max(1), world.now, FUTURE_QUANTILE));
        }
        if pending.is_empty() {
            break;
        }
        let Some(next) = ends.values().copied().min() else { break };
        world.now = next;
        world.end_due(&mut ends);
    }
    starts
}

/// Estimates are shown later than the forecast's starts by this share of
/// how far ahead they are. The forecast knows no job that has not arrived
/// yet, and a newcomer of a lab that used less goes first, so an unpadded
/// estimate is mostly a little early. Measured on October at 64×8
/// (`jpu-share sim --forecast`, this module's guide): 0.1 left 20.1 % of jobs starting
/// later than their estimate at submission, 0.15 left 15.6 %, for a median
/// error an hour ahead of 333 s and 502 s.
pub const ESTIMATE_MARGIN: f64 = 0.15;

/// A world's running research jobs as the forecast reads them, each
/// ending at its time limit (the simulator's live state).
pub fn running_of(world: &World) -> Vec<RunningJob> {
    world
        .jobs
        .values()
        .filter_map(|j| {
            j.running.as_ref().map(|r| RunningJob {
                id: j.id,
                lab: j.lab,
                user: j.user,
                node: r.node.clone(),
                tier: r.tier.clone(),
                gpus: r.gpus.clone(),
                started_ms: r.started_ms,
                ends_ms: r.started_ms + j.time_limit_ms,
            })
        })
        .collect()
}

/// The snapshot as a [`World`] (its jobs, GPUs and lab usage), cut to the
/// first `depth` jobs of the global queue.
fn world_of(input: &ForecastInput<'_>) -> World {
    let snap = input.snapshot;
    let placements = snap
        .placements
        .iter()
        .map(|p| {
            let mut gpus = p.free.clone();
            for r in input.running.iter().filter(|r| r.node == p.node && r.tier == p.tier) {
                gpus.extend(&r.gpus);
            }
            gpus.sort_unstable();
            gpus.dedup();
            PlacementDef { node: p.node.clone(), tier: p.tier.clone(), gpus, usable: p.usable }
        })
        .collect();
    let mut world = World::new(snap.tiers.clone(), placements);
    world.keep_ledger = false;
    world.mode = snap.mode;
    world.now = snap.now_ms;
    world.labs = snap.labs.iter().map(|l| (l.lab, *l)).collect();
    world.max_concurrent = snap.users.iter().map(|u| (u.user, u.max_concurrent)).collect();
    world.arrays = snap.arrays.iter().map(|a| (a.array, a.max_running)).collect();
    for r in input.running {
        let mut j = WorldJob::new(r.id, r.lab, r.user, r.gpus.len() as u32, JobState::Running, snap.now_ms);
        j.time_limit_ms = (r.ends_ms - snap.now_ms).max(0);
        j.array = input.array_of.get(&r.id).copied();
        world.jobs.insert(r.id, j);
        let running = Running {
            node: r.node.clone(),
            tier: r.tier.clone(),
            gpus: r.gpus.clone(),
            started_ms: snap.now_ms,
            charged_until_ms: snap.now_ms,
            slot: world.slot(&r.node, &r.tier),
        };
        world.jobs.get_mut(&r.id).expect("inserted").running = Some(running);
    }
    let head = super::steps::fair_share_order(snap, snap.queue.clone());
    for q in head.into_iter().take(input.depth) {
        let mut j = WorldJob::new(q.id, q.lab, q.user, q.num_gpus, JobState::GlobalQueueWait, q.queue_entered_at_ms);
        j.min_vram_gb = q.min_vram_gb;
        j.reservation = q.reservation;
        j.accrued = q.accrued;
        j.time_limit_ms = q.time_limit_ms;
        j.array = input.array_of.get(&q.id).copied();
        world.jobs.insert(q.id, j);
    }
    for p in &snap.personal {
        let mut j =
            WorldJob::new(p.job.id, p.job.lab, p.job.user, p.job.num_gpus, JobState::UserQueueWait, p.submitted_at_ms);
        j.min_vram_gb = p.job.min_vram_gb;
        j.time_limit_ms = p.job.time_limit_ms;
        j.array = p.array;
        world.jobs.insert(p.job.id, j);
    }
    world
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Millis = 60_000;

    fn queued(id: JobId, num_gpus: u32, entered: Millis, limit_min: i64) -> QueuedJob {
        QueuedJob {
            id,
            lab: 1,
            user: id,
            num_gpus,
            queue_entered_at_ms: entered,
            min_vram_gb: 0,
            reservation: None,
            accrued: Accrued::default(),
            time_limit_ms: limit_min * MIN,
        }
    }

    fn no_arrays() -> &'static HashMap<JobId, ArrayId> {
        static NONE: std::sync::OnceLock<HashMap<JobId, ArrayId>> = std::sync::OnceLock::new();
        NONE.get_or_init(HashMap::new)
    }

    fn input<'a>(
        snapshot: &'a Snapshot,
        running: &'a [RunningJob],
        depth: usize,
        max_events: usize,
        history: &'a RuntimeHistory,
    ) -> ForecastInput<'a> {
        ForecastInput {
            snapshot,
            running,
            depth,
            max_events,
            wanted: None,
            history,
            margin: 0.0,
            array_of: no_arrays(),
        }
    }

    fn running(id: JobId, gpu: u32, ends_ms: Millis) -> RunningJob {
        RunningJob { id, lab: 1, user: id, node: "n".into(), tier: "t".into(), gpus: vec![gpu], started_ms: 0, ends_ms }
    }

    fn snapshot(queue: Vec<QueuedJob>) -> Snapshot {
        Snapshot {
            now_ms: 0,
            phase: MaintenancePhase::Normal,
            tiers: vec![TierInfo {
                name: "t".into(),
                tflops: 10.0,
                vram_gb: 24,
                sort_order: 1,
                max_gpus: 2,
                active: true,
            }],
            placements: vec![PlacementState {
                node: "n".into(),
                tier: "t".into(),
                capacity: 2,
                usable: true,
                free: vec![],
                backfill: vec![],
            }],
            labs: vec![LabUsage { lab: 1, value: 0.0, as_of_ms: 0 }],
            queue,
            personal: vec![],
            users: vec![],
            arrays: vec![],
            research_active: 2,
            backfill_active: 0,
            mode: PolicyMode::Seed,
            busy_until: vec![],
        }
    }

    /// Two GPUs busy until 10 and 30 min; C (1 GPU, 60 min), D (2 GPUs,
    /// 20 min), E (1 GPU, 5 min) wait in that order. C takes the first GPU
    /// to free up; D, rank 1 from then, reserves the second at 30 and
    /// absorbs the first when C ends at 70; E may not take reserved GPUs
    /// and starts when D ends at 90.
    #[test]
    fn a_small_scenario_is_forecast_exactly() {
        let snap = snapshot(vec![queued(3, 1, 1, 60), queued(4, 2, 2, 20), queued(5, 1, 3, 5)]);
        let busy = [running(1, 0, 10 * MIN), running(2, 1, 30 * MIN)];
        let starts = forecast(&input(&snap, &busy, 100, 100, &RuntimeHistory::default()));
        assert_eq!(starts.get(&3), Some(&(10 * MIN)));
        assert_eq!(starts.get(&4), Some(&(70 * MIN)));
        assert_eq!(starts.get(&5), Some(&(90 * MIN)));
        // shown later by a tenth of how far ahead each start is
        let shown =
            forecast(&ForecastInput { margin: 0.1, ..input(&snap, &busy, 100, 100, &RuntimeHistory::default()) });
        assert_eq!([shown[&3], shown[&4], shown[&5]], [11 * MIN, 77 * MIN, 99 * MIN]);
    }

    /// The same scenario with a predictor: job 1's user uses half its
    /// limits, so its GPU frees at 5 min; C (user 3, no history) then runs
    /// to its limit.
    #[test]
    fn predicted_runtimes_bring_the_estimates_forward() {
        let snap = snapshot(vec![queued(3, 1, 1, 60), queued(4, 2, 2, 20), queued(5, 1, 3, 5)]);
        let busy = [running(1, 0, 10 * MIN), running(2, 1, 30 * MIN)];
        // users 1 and 4 ran half of a limit like this job's before
        let history = RuntimeHistory::from_recent([(1, 5 * MIN, 10 * MIN), (4, 10 * MIN, 20 * MIN)]);
        let starts = forecast(&input(&snap, &busy, 100, 100, &history));
        assert_eq!(starts.get(&3), Some(&(5 * MIN)), "job 1 predicted to end at 5");
        // D reserves GPU 1 at 30 and takes GPU 0 when C ends at 65;
        // D's user uses half its 20 min: E starts at 75
        assert_eq!(starts.get(&4), Some(&(65 * MIN)));
        assert_eq!(starts.get(&5), Some(&(75 * MIN)));
    }

    #[test]
    fn the_forecast_is_bounded_and_empty_in_maintenance() {
        let none = RuntimeHistory::default();
        let snap = snapshot(vec![queued(3, 1, 1, 60), queued(4, 2, 2, 60), queued(5, 1, 3, 60)]);
        let busy = [running(1, 0, 10 * MIN), running(2, 1, 30 * MIN)];
        // only the head of the queue is carried forward
        let head = forecast(&input(&snap, &busy, 1, 100, &none));
        assert_eq!(head.keys().copied().collect::<Vec<_>>(), vec![3]);
        // one end time looked at: only C starts
        let short = forecast(&input(&snap, &busy, 100, 2, &none));
        assert_eq!(short.get(&3), Some(&(10 * MIN)));
        assert_eq!(short.get(&5), None);
        let draining = Snapshot { phase: MaintenancePhase::Draining, ..snap.clone() };
        assert!(forecast(&input(&draining, &busy, 100, 100, &none)).is_empty());
    }
}
