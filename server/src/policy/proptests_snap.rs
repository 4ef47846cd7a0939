//! One `planned` cycle on hostile snapshots, as a property: whatever
//! researchers' jobs ask (limits from 0 to the largest a tier takes, any
//! GPU count), whatever state the database holds (reservations on
//! placements gone or GPUs out of range, drains left from another mode,
//! busy GPUs listed twice or past their jobs' ends, predictions far off)
//! and whichever settings an admin picked, the policy does not panic,
//! starts jobs only on GPUs free in the snapshot, each once, and holds
//! only idle GPUs nobody starts on.

use std::collections::HashSet;

use proptest::prelude::*;

use super::model::*;
use super::tests::{job, snapshot, state, MIN};
use super::*;

const NOW: Millis = 10 * MIN;

fn limit_ms() -> impl Strategy<Value = Millis> {
    prop_oneof![Just(0), Just(1), Just(MIN), 0..10_000_000_000i64, Just(i64::from(u32::MAX) * MIN)]
}

/// Busy GPUs' ends: past (a job over its limit, being killed), now (a
/// cancel), or later.
fn end_ms() -> impl Strategy<Value = Millis> {
    prop_oneof![Just(NOW - 5 * MIN), Just(NOW), Just(NOW + 1), NOW + 1..NOW + 10_000_000_000]
}

prop_compose! {
    /// A placement of up to 4 GPUs, and its busy GPUs (some listed twice).
    fn placement()(capacity in 1u32..=4, free in prop::collection::vec(any::<bool>(), 4),
                   usable in prop::bool::weighted(0.85), ends in prop::collection::vec(end_ms(), 4),
                   twice in any::<bool>()) -> (PlacementState, Vec<(u32, Millis)>) {
        let idle: Vec<u32> = (0..capacity).filter(|&g| free[g as usize]).collect();
        let mut busy: Vec<(u32, Millis)> =
            (0..capacity).filter(|&g| !free[g as usize]).map(|g| (g, ends[g as usize])).collect();
        if twice {
            busy.extend(busy.clone().into_iter().map(|(g, at)| (g, at.saturating_add(MIN))));
        }
        let mut p = state("x", "rtx4090", capacity, &idle);
        p.usable = usable;
        (p, busy)
    }
}

prop_compose! {
    fn queued()(lab in 1i64..=4, gpus in 1u32..=5, entered in prop_oneof![Just(0), 0..NOW, Just(NOW)],
                limit in limit_ms(),
                res in prop::option::weighted(0.5, (0usize..4, prop::collection::vec(0u32..5, 0..4), 0u32..6,
                                                    prop_oneof![Just(0), 0..NOW, Just(NOW)]))) -> QueuedJob {
        let mut j = job(0, lab, gpus, entered);
        j.time_limit_ms = limit;
        j.reservation = res.map(|(n, gpus, drained, at)| Box::new(Reservation {
            node: format!("n{n}"), tier: "rtx4090".into(), gpus, drained, accrued_at_ms: at,
        }));
        j
    }
}

fn params() -> impl Strategy<Value = PlannedParams> {
    let drains = prop_oneof![
        Just(None),
        (1u32..3).prop_map(|k| Some(DrainBudget::Jobs(k))),
        (1u32..=100).prop_map(|p| Some(DrainBudget::PercentOfPlacements(p))),
    ];
    let wait = prop_oneof![Just(0), Just(5 * MIN), Just(i64::from(u32::MAX) * 3_600_000)];
    let some = || prop_oneof![Just(0u32), Just(1), Just(50), Just(u32::MAX)];
    (0usize..6, wait, 0u32..=200, some(), drains, some(), any::<bool>(), any::<bool>()).prop_map(
        |(depth, max_wait_ms, lift_percent, ahead, drains, after, charge, predicted)| PlannedParams {
            depth,
            max_wait_ms,
            lift_percent,
            lift_ahead_of_light: ahead,
            drains,
            drain_after_percent: after,
            charge_drains: charge,
            predicted_ends: predicted,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn a_planned_cycle_starts_jobs_only_on_free_gpus_whatever_the_snapshot(
        places in prop::collection::vec(placement(), 0..4),
        jobs in prop::collection::vec(queued(), 0..7),
        usage in prop::collection::vec(0.0f64..1e6, 4),
        early in prop::collection::vec(0i64..=4, 16),
        p in params(),
    ) {
        let mut placements = Vec::new();
        let mut busy = Vec::new();
        for (n, (mut place, gpus)) in places.into_iter().enumerate() {
            place.node = format!("n{n}");
            for (k, (g, until)) in gpus.into_iter().enumerate() {
                let mut b = BusyGpu::new(Some(n), g, (1, 100), 0, until);
                // predicted anywhere from long past to the limit
                b.predicted_ms = until - early[k % early.len()] * 30 * MIN;
                busy.push(b);
            }
            placements.push(place);
        }
        let queue: Vec<QueuedJob> = jobs
            .into_iter()
            .enumerate()
            .map(|(i, mut j)| {
                j.id = i as JobId + 1;
                j
            })
            .collect();
        let labs: Vec<(LabId, f64)> = (1..=4).map(|l| (l, usage[l as usize - 1])).collect();
        let mut snap = snapshot(placements.clone(), &labs, queue.clone());
        snap.mode = PolicyMode::Planned(p);
        snap.busy_until = busy;
        let plan = decide(&snap);
        let mut started: HashSet<(String, u32)> = HashSet::new();
        for d in &plan.dispatches {
            let place = placements.iter().find(|x| x.node == d.node).expect("a known placement");
            let j = queue.iter().find(|j| j.id == d.job).expect("a queued job");
            prop_assert_eq!(d.gpus.len() as u32, j.num_gpus);
            for g in &d.gpus {
                prop_assert!(place.free.contains(g), "job {} started on busy GPU {}/{}", d.job, d.node, g);
                prop_assert!(started.insert((d.node.clone(), *g)), "GPU {}/{} started twice", d.node, g);
            }
        }
        for w in &plan.waiting {
            let Some(r) = &w.reservation else { continue };
            for g in &r.gpus {
                prop_assert!(!started.contains(&(r.node.clone(), *g)), "GPU {}/{} held and started", r.node, g);
                let place = placements.iter().find(|x| x.node == r.node);
                prop_assert!(place.is_some_and(|x| x.free.contains(g)), "held GPU not idle: {:?}", r);
            }
            if !p.charge_drains {
                prop_assert_eq!(r.drained, 0, "a drain accrues with the charge off");
            }
        }
        for c in &plan.charges {
            prop_assert!(c.amount >= 0.0 && c.gpu_seconds >= 0.0, "negative charge {:?}", c);
        }
        // nobody waiting: nothing to plan, in either mode (the simulator
        // skips such cycles, `World::anyone_waiting`)
        snap.queue.clear();
        snap.personal.clear();
        prop_assert_eq!(decide(&snap), Plan::default());
        snap.mode = PolicyMode::Seed;
        prop_assert_eq!(decide(&snap), Plan::default());
    }
}
