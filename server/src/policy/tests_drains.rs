//! Table-driven tests of `planned`'s drains (§11): the budget, the
//! expansion-factor threshold and the charge for GPUs a drain keeps idle.

use super::model::*;
use super::tests::{dispatch_of, job, snapshot, state, waiting_of, BCG, KDG, MIN};
use super::tests_planned::{lifted, limit, on, params};
use super::*;

const NOW: Millis = 10 * MIN;

fn mode(drains: Option<DrainBudget>, after: u32, charge: bool) -> PolicyMode {
    PolicyMode::Planned(PlannedParams {
        drains,
        drain_after_percent: after,
        charge_drains: charge,
        ..params(100, 1_000 * MIN)
    })
}

/// Node `a` (2 GPUs): GPU 1 runs until +60 min, GPU 0 is idle. The 2-GPU
/// job plans its start at +60; no job fits before it, so GPU 0 stands idle
/// for it: charged to its lab from now (it holds nothing: the start is
/// over 10 min away). A short job that fits before the start takes the GPU,
/// and then nothing is drained.
fn one_drain(queue: Vec<QueuedJob>, charge: bool) -> Snapshot {
    let mut snap = snapshot(vec![state("a", "rtx4090", 2, &[0])], &[(BCG, 1.0), (KDG, 2.0)], queue);
    snap.mode = mode(None, 0, charge);
    snap.busy_until = vec![BusyGpu::new(on(&snap, "a"), 1, (0, 0), 0, NOW + 60 * MIN)];
    snap
}

#[test]
fn a_gpu_left_idle_for_a_planned_start_is_charged_to_the_waiting_lab() {
    let plan = decide(&one_drain(vec![limit(job(1, BCG, 2, 0), 60)], true));
    let w = waiting_of(&plan, 1);
    assert!(matches!(w.reason, PendingReason::Planned { held: 0, .. }), "{:?}", w.reason);
    let res = w.reservation.clone().expect("a drain is carried like a reservation");
    assert_eq!((res.gpus.len(), res.drained, res.accrued_at_ms), (0, 1, NOW));

    // five minutes later the next cycle accrues it: 1 GPU × 300 s
    let mut next = one_drain(vec![limit(job(1, BCG, 2, 0), 60)], true);
    next.now_ms = NOW + 5 * MIN;
    next.queue[0].reservation = Some(res);
    let later = decide(&next);
    let w = waiting_of(&later, 1);
    assert_eq!(w.accrued.gpu_seconds, 300.0);
    assert_eq!(w.accrued.cost, 300.0 * 82.6);
    assert_eq!(w.reservation.as_ref().map(|r| r.drained), Some(1), "still drained");
    assert!(later.charges.is_empty(), "charged when the job ends (R4), not while it waits");

    // without the charge, as v2: nothing is carried
    let plan = decide(&one_drain(vec![limit(job(1, BCG, 2, 0), 60)], false));
    assert_eq!(waiting_of(&plan, 1).reservation, None);
}

#[test]
fn a_gpu_a_shorter_job_takes_before_the_start_is_not_drained() {
    let plan = decide(&one_drain(vec![limit(job(1, BCG, 2, 0), 60), limit(job(2, KDG, 1, 0), 30)], true));
    assert!(dispatch_of(&plan, 2).is_some(), "a 30-minute job ends before the start at +60");
    assert_eq!(waiting_of(&plan, 1).reservation, None, "nothing stood idle for job 1");
}

/// Three 2-GPU jobs that each must wait for a busy GPU of their own node.
fn three_waiting(budget: Option<DrainBudget>, after: u32, entered: Millis) -> Snapshot {
    let nodes = ["a", "b", "c"];
    let mut snap = snapshot(
        nodes.iter().map(|n| state(n, "rtx4090", 2, &[0])).collect(),
        &[(BCG, 1.0), (KDG, 2.0)],
        (1..=3).map(|id| limit(job(id, BCG, 2, entered + id), 60)).collect(),
    );
    snap.mode = mode(budget, after, true);
    snap.busy_until = nodes.iter().map(|n| BusyGpu::new(on(&snap, n), 1, (0, 0), 0, NOW + 60 * MIN)).collect();
    snap
}

fn planned_jobs(plan: &Plan) -> Vec<JobId> {
    let mut ids: Vec<JobId> =
        plan.waiting.iter().filter(|w| matches!(w.reason, PendingReason::Planned { .. })).map(|w| w.job).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn at_most_the_budget_of_jobs_drain_at_once() {
    for (budget, drained) in [
        (None, vec![1, 2, 3]),
        (Some(DrainBudget::Jobs(1)), vec![1]),
        (Some(DrainBudget::Jobs(2)), vec![1, 2]),
        (Some(DrainBudget::Jobs(3)), vec![1, 2, 3]),
        // of 3 placements: 1 % and 33 % round up to one, 34 % to two
        (Some(DrainBudget::PercentOfPlacements(1)), vec![1]),
        (Some(DrainBudget::PercentOfPlacements(33)), vec![1]),
        (Some(DrainBudget::PercentOfPlacements(34)), vec![1, 2]),
        (Some(DrainBudget::PercentOfPlacements(100)), vec![1, 2, 3]),
    ] {
        let plan = decide(&three_waiting(budget, 0, 0));
        assert_eq!(planned_jobs(&plan), drained, "{budget:?}");
        for w in plan.waiting.iter().filter(|w| !drained.contains(&w.job)) {
            assert_eq!(w.reservation, None, "job {} holds and drains nothing", w.job);
            assert_eq!(w.reason, PendingReason::NoIdleGpu);
        }
    }
}

#[test]
fn a_drain_under_way_keeps_its_place_in_the_budget() {
    let mut snap = three_waiting(Some(DrainBudget::Jobs(1)), 0, 0);
    snap.queue[2].reservation = Some(Box::new(Reservation {
        node: "c".into(),
        tier: "rtx4090".into(),
        gpus: vec![],
        drained: 1,
        accrued_at_ms: NOW,
    }));
    let plan = decide(&snap);
    assert_eq!(planned_jobs(&plan), vec![3], "job 3 drained last cycle; jobs 1 and 2 come first in the order");
    assert!(plan.releases.is_empty());
}

#[test]
fn a_job_drains_only_once_it_has_waited_its_share_of_its_limit() {
    // limits of 60 min; entered at NOW - waited
    for (after, waited, drains) in [(0, 0, true), (100, 59, false), (100, 60, true), (50, 29, false), (50, 30, true)] {
        let plan = decide(&three_waiting(Some(DrainBudget::Jobs(1)), after, NOW - waited * MIN - 1));
        assert_eq!(planned_jobs(&plan).contains(&1), drains, "{after} % after {waited} min");
    }
}

/// Light labs (usage at most the mean of the labs waiting) head the
/// fair-share order; lifted jobs go behind them but for the oldest
/// `ahead`.
#[test]
fn overdue_jobs_go_behind_light_labs_but_for_the_oldest_few() {
    const HEAVY: LabId = 3;
    // usage 1, 2 and 1,000: the mean is 334.3, so BCG and KDG are light
    let gpus = || vec![state("a", "rtx4090", 8, &[])];
    let snap = snapshot(gpus(), &[(BCG, 1.0), (KDG, 2.0), (HEAVY, 1_000.0)], vec![]);
    let queue = || {
        vec![
            job(1, BCG, 1, NOW),
            job(2, KDG, 1, NOW - MIN),
            job(3, HEAVY, 8, 0),
            job(4, HEAVY, 8, MIN),
            job(5, HEAVY, 1, NOW),
        ]
    };
    let light = planned::light_prefix(&snap, &queue());
    assert_eq!(light, 2);
    for (ahead, order) in [(0, [1, 2, 3, 4, 5]), (1, [3, 1, 2, 4, 5]), (2, [3, 4, 1, 2, 5]), (3, [3, 4, 1, 2, 5])] {
        let lift = planned::Lift { max_wait_ms: 5 * MIN, gpus: 16, behind: light, ahead };
        let got: Vec<JobId> = lifted(&queue(), lift);
        assert_eq!(got, order, "{ahead} ahead of light labs");
    }
    // a lab just over the mean is heavy
    let even = snapshot(gpus(), &[(BCG, 1.0), (KDG, 1.0), (HEAVY, 1.0 + 1e-9)], vec![]);
    assert_eq!(planned::light_prefix(&even, &queue()), 2);
    assert_eq!(planned::light_prefix(&even, &[] as &[QueuedJob]), 0);
}

/// A light lab's jobs go ahead of overdue ones only as far as its running
/// GPUs and theirs fit its equal share (6 GPUs, 2 labs: 3 each): usage
/// is charged when a run ends, so a lab filling the cluster would stay
/// light meanwhile.
#[test]
fn a_light_lab_goes_ahead_only_within_its_share() {
    const HEAVY: LabId = 3;
    let queue = [job(1, BCG, 1, NOW), job(2, BCG, 1, NOW), job(3, HEAVY, 8, 0)];
    for (running, light) in [(0, 2), (1, 2), (2, 1), (3, 0)] {
        let mut snap = snapshot(vec![state("a", "rtx4090", 6, &[])], &[(BCG, 1.0), (HEAVY, 1_000.0)], vec![]);
        snap.busy_until = (0..running).map(|g| BusyGpu::new(on(&snap, "a"), g, (BCG, 100), 0, NOW + MIN)).collect();
        assert_eq!(planned::light_prefix(&snap, &queue), light, "{running} GPUs running");
    }
}

/// Job 1 drains `a` (no GPU held: its start is 3 days out) when `b` is
/// wholly free: it starts on `b` now, charged what the drain accrued, and
/// the job behind it does not take `b` first. Holding GPUs still keeps a
/// job on its placement.
#[test]
fn a_drain_does_not_tie_a_job_to_its_placement() {
    let drain = |gpus: Vec<u32>| Reservation {
        node: "a".into(),
        tier: "rtx4090".into(),
        gpus,
        drained: 1,
        accrued_at_ms: NOW - MIN,
    };
    for (held, starts_on_b) in [(vec![], true), (vec![0], false)] {
        let mut first = limit(job(1, BCG, 2, 0), 60);
        first.reservation = Some(Box::new(drain(held.clone())));
        let mut snap = snapshot(
            vec![state("a", "rtx4090", 2, &[0]), state("b", "rtx4090", 2, &[0, 1])],
            &[(BCG, 1.0), (KDG, 2.0)],
            vec![first, limit(job(2, KDG, 2, 0), 60)],
        );
        snap.mode = mode(None, 0, true);
        snap.busy_until = vec![BusyGpu::new(on(&snap, "a"), 1, (KDG, 0), 0, NOW + 3 * 24 * 60 * MIN)];
        let plan = decide(&snap);
        let on_b = dispatch_of(&plan, 1).is_some_and(|d| d.node == "b");
        assert_eq!(on_b, starts_on_b, "holding {held:?}");
        if starts_on_b {
            assert!(plan.releases.iter().any(|r| r.job == 1 && r.node == "a"), "the drain on a ends");
            let charged: f64 = plan.charges.iter().filter(|c| c.job == 1).map(|c| c.gpu_seconds).sum();
            assert!((charged - 60.0).abs() < 1e-6, "one drained GPU for a minute: {charged}");
        }
    }
}

/// A GPU whose job is being cancelled (or is past its limit) is not idle:
/// it is not charged to the waiting job as drained, and a GPU listed twice
/// is one GPU.
#[test]
fn only_idle_gpus_are_drained_and_a_gpu_listed_twice_is_one() {
    let mut snap = snapshot(vec![state("a", "rtx4090", 2, &[])], &[(BCG, 1.0)], vec![limit(job(1, BCG, 2, 0), 60)]);
    snap.mode = mode(None, 0, true);
    snap.busy_until = vec![
        BusyGpu::new(on(&snap, "a"), 0, (KDG, 0), 0, NOW),
        BusyGpu::new(on(&snap, "a"), 0, (KDG, 0), 0, NOW),
        BusyGpu::new(on(&snap, "a"), 1, (KDG, 0), 0, NOW + 60 * MIN),
    ];
    let plan = decide(&snap);
    assert!(plan.dispatches.is_empty());
    assert_eq!(waiting_of(&plan, 1).reservation.as_ref().map_or(0, |r| r.drained), 0);
}

/// A drain stored by `planned` is charged up to the cycle an admin turns
/// drain charging off or switches to the seed, and no further.
#[test]
fn a_stored_drain_stops_accruing_when_drains_are_no_longer_charged() {
    for policy in [PolicyMode::Seed, mode(None, 0, false)] {
        let mut first = limit(job(1, BCG, 2, 0), 60);
        first.reservation = Some(Box::new(Reservation {
            node: "a".into(),
            tier: "rtx4090".into(),
            gpus: vec![],
            drained: 2,
            accrued_at_ms: NOW - 5 * MIN,
        }));
        let mut snap = snapshot(vec![state("a", "rtx4090", 2, &[0])], &[(BCG, 1.0)], vec![first]);
        snap.mode = policy;
        snap.busy_until = vec![BusyGpu::new(on(&snap, "a"), 1, (KDG, 0), 0, NOW + 60 * MIN)];
        let plan = decide(&snap);
        let w = waiting_of(&plan, 1);
        // carried on, or charged with a release
        let charged: f64 = plan.charges.iter().filter(|c| c.job == 1).map(|c| c.gpu_seconds).sum();
        let total = w.accrued.gpu_seconds + charged;
        assert!((total - 600.0).abs() < 1e-6, "{policy:?}: 2 GPUs × 5 min, not {total}");
        assert!(w.reservation.as_ref().is_none_or(|r| r.drained == 0), "{policy:?}: {:?}", w.reservation);
    }
}
