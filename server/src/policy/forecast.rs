//! The start-time forecast (policy §11): the live state run forward
//! through the same [`decide`](super::decide) in virtual time. Running
//! jobs end at their time limits, every job started in the forecast ends
//! at its own, nothing new arrives; each waiting job's estimate is the
//! virtual time it was dispatched. It is an estimate and shown as one.
//!
//! Bounded: only the first `depth` jobs of the fair-share order (and the
//! heads of personal queues) are carried forward, for at most
//! `max_events` end times — jobs further back get no estimate rather than
//! a slow one.

use std::collections::{BTreeMap, HashMap, HashSet};

use app::model::{JobState, MaintenancePhase};

use super::model::*;
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
    let mut ends: BTreeMap<JobId, Millis> = input.running.iter().map(|r| (r.id, r.ends_ms.max(snap.now_ms))).collect();
    let mut starts: HashMap<JobId, Millis> = HashMap::new();
    for _ in 0..input.max_events {
        let plan = world.cycle();
        for d in &plan.dispatches {
            starts.insert(d.job, world.now);
            pending.remove(&d.job);
            let limit = world.jobs.get(&d.job).map_or(DEFAULT_TIME_LIMIT_MS, |j| j.time_limit_ms);
            ends.insert(d.job, world.now + limit.max(1));
        }
        if pending.is_empty() {
            break;
        }
        let Some(next) = ends.values().copied().min() else { break };
        world.now = next;
        let ended: Vec<JobId> = ends.iter().filter(|(_, &at)| at <= next).map(|(&id, _)| id).collect();
        for id in ended {
            ends.remove(&id);
            world.end(id, JobState::Completed);
        }
    }
    starts
}

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
    world.mode = snap.mode;
    world.now = snap.now_ms;
    world.labs = snap.labs.iter().map(|l| (l.lab, *l)).collect();
    world.max_concurrent = snap.users.iter().map(|u| (u.user, u.max_concurrent)).collect();
    for r in input.running {
        let mut j = WorldJob::new(r.id, r.lab, r.user, r.gpus.len() as u32, JobState::Running, snap.now_ms);
        j.time_limit_ms = (r.ends_ms - snap.now_ms).max(0);
        world.jobs.insert(r.id, j);
        let running = Running {
            node: r.node.clone(),
            tier: r.tier.clone(),
            gpus: r.gpus.clone(),
            started_ms: snap.now_ms,
            charged_until_ms: snap.now_ms,
        };
        world.jobs.get_mut(&r.id).expect("inserted").running = Some(running);
    }
    let head = super::cycle::fair_share_order(snap, snap.queue.clone());
    for q in head.into_iter().take(input.depth) {
        let mut j = WorldJob::new(q.id, q.lab, q.user, q.num_gpus, JobState::GlobalQueueWait, q.queue_entered_at_ms);
        j.min_vram_gb = q.min_vram_gb;
        j.reservation = q.reservation;
        j.accrued = q.accrued;
        j.time_limit_ms = q.time_limit_ms;
        world.jobs.insert(q.id, j);
    }
    for p in &snap.personal {
        let mut j =
            WorldJob::new(p.job.id, p.job.lab, p.job.user, p.job.num_gpus, JobState::UserQueueWait, p.submitted_at_ms);
        j.min_vram_gb = p.job.min_vram_gb;
        j.time_limit_ms = p.job.time_limit_ms;
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

    fn running(id: JobId, gpu: u32, ends_ms: Millis) -> RunningJob {
        RunningJob { id, lab: 1, user: id, node: "n".into(), tier: "t".into(), gpus: vec![gpu], ends_ms }
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
        let input = ForecastInput { snapshot: &snap, running: &busy, depth: 100, max_events: 100, wanted: None };
        let starts = forecast(&input);
        assert_eq!(starts.get(&3), Some(&(10 * MIN)));
        assert_eq!(starts.get(&4), Some(&(70 * MIN)));
        assert_eq!(starts.get(&5), Some(&(90 * MIN)));
    }

    #[test]
    fn the_forecast_is_bounded_and_empty_in_maintenance() {
        let snap = snapshot(vec![queued(3, 1, 1, 60), queued(4, 2, 2, 60), queued(5, 1, 3, 60)]);
        let busy = [running(1, 0, 10 * MIN), running(2, 1, 30 * MIN)];
        // only the head of the queue is carried forward
        let head =
            forecast(&ForecastInput { snapshot: &snap, running: &busy, depth: 1, max_events: 100, wanted: None });
        assert_eq!(head.keys().copied().collect::<Vec<_>>(), vec![3]);
        // one end time looked at: only C starts
        let short =
            forecast(&ForecastInput { snapshot: &snap, running: &busy, depth: 100, max_events: 2, wanted: None });
        assert_eq!(short.get(&3), Some(&(10 * MIN)));
        assert_eq!(short.get(&5), None);
        let draining = Snapshot { phase: MaintenancePhase::Draining, ..snap.clone() };
        let none =
            forecast(&ForecastInput { snapshot: &draining, running: &busy, depth: 100, max_events: 100, wanted: None });
        assert!(none.is_empty());
    }
}
