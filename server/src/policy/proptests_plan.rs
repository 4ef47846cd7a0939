//! The plan across cycles (§11), as a property: in virtual time, with
//! every job running exactly its time limit (the longest the plan must
//! allow for), no job behind a planned one ever delays it — each job
//! starts no later than the first start the plan gave it. One lab, so the
//! order is arrival order (max-wait escalation keeps it: the overdue are
//! the oldest) and "behind" means "arrived later"; with several labs a job
//! may rightly be overtaken by one whose lab used less.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;

use super::model::*;
use super::tests_planned::params;
use super::world::{PlacementDef, World};

#[derive(Debug, Clone)]
struct Workload {
    placements: Vec<PlacementDef>,
    /// (arrives after the previous one, GPUs, time limit = run time)
    jobs: Vec<(Millis, u32, Millis)>,
    depth: usize,
    max_wait_ms: Millis,
    lift_percent: u32,
}

fn tiers() -> Vec<TierInfo> {
    ["small", "large"]
        .iter()
        .enumerate()
        .map(|(i, name)| TierInfo {
            name: name.to_string(),
            tflops: 10.0 + 20.0 * i as f64,
            vram_gb: 24 + 24 * i as u32,
            sort_order: i as i64,
            max_gpus: 8,
            active: true,
        })
        .collect()
}

fn workload() -> impl Strategy<Value = Workload> {
    let placements = prop::collection::vec((0usize..2, 1u32..=8), 1..=6).prop_map(|ps| {
        ps.into_iter()
            .enumerate()
            .map(|(n, (tier, cap))| PlacementDef {
                node: format!("node-{n}"),
                tier: ["small", "large"][tier].to_string(),
                gpus: (0..cap).collect(),
                usable: true,
            })
            .collect()
    });
    let job =
        (0i64..1_200_000, prop_oneof![4 => Just(1u32), 2 => Just(2), 1 => Just(4), 1 => Just(8)], 60_000i64..7_200_000);
    let waits = prop_oneof![Just(Millis::MAX), 600_000i64..7_200_000];
    (placements, prop::collection::vec(job, 5..60), 1usize..12, waits, 0u32..=100).prop_map(
        |(placements, jobs, depth, max_wait_ms, lift_percent)| Workload {
            placements,
            jobs,
            depth,
            max_wait_ms,
            lift_percent,
        },
    )
}

/// Each job's first planned start and its actual start, replayed event by
/// event (arrivals, ends, planned starts).
fn replay(w: &Workload) -> (HashMap<JobId, Millis>, HashMap<JobId, Millis>) {
    let mut world = World::new(tiers(), w.placements.clone());
    world.mode = PolicyMode::Planned(PlannedParams { lift_percent: w.lift_percent, ..params(w.depth, w.max_wait_ms) });
    world.default_max_concurrent = u32::MAX;
    let mut arrivals: Vec<(Millis, JobId, u32, Millis)> = Vec::new();
    let mut at = 0;
    for (k, &(gap, gpus, limit)) in w.jobs.iter().enumerate() {
        at += gap;
        arrivals.push((at, k as JobId + 1, gpus, limit));
    }
    let mut next_arrival = 0;
    let mut ends: BTreeMap<JobId, Millis> = BTreeMap::new();
    let mut planned_at: BTreeMap<JobId, Millis> = BTreeMap::new();
    let (mut first_plan, mut started) = (HashMap::new(), HashMap::new());
    loop {
        let candidates = [
            arrivals.get(next_arrival).map(|a| a.0),
            ends.values().copied().min(),
            planned_at.values().copied().filter(|&t| t > world.now).min(),
        ];
        let Some(now) = candidates.into_iter().flatten().min() else { break };
        world.now = now;
        world.end_due(&mut ends);
        while let Some(&(_, id, gpus, limit)) = arrivals.get(next_arrival).filter(|a| a.0 == now) {
            world.submit(id, 1, id, gpus);
            world.jobs.get_mut(&id).expect("submitted").time_limit_ms = limit;
            next_arrival += 1;
        }
        let plan = world.cycle();
        planned_at.clear();
        for d in &plan.dispatches {
            started.insert(d.job, now);
            ends.insert(d.job, now + world.jobs[&d.job].time_limit_ms);
        }
        for p in &plan.waiting {
            if let PendingReason::Planned { start_ms, .. } = p.reason {
                first_plan.entry(p.job).or_insert(start_ms);
                planned_at.insert(p.job, start_ms);
            }
        }
    }
    (first_plan, started)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn no_later_job_delays_a_planned_start(w in workload()) {
        let (first_plan, started) = replay(&w);
        for (job, plan) in &first_plan {
            let start = started.get(job).copied();
            prop_assert!(start.is_some_and(|s| s <= *plan), "job {job} planned at {plan} started at {start:?}");
        }
    }
}
