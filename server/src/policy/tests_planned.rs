//! Table-driven tests of the `planned` policy's rules (§11), on the same
//! small builders as the seed's tests.

use super::model::*;
use super::tests::{dispatch_of, job, snapshot, state, waiting_of, BCG, KDG, MIN};
use super::*;

const NOW: Millis = 10 * MIN;

fn planned(mut snap: Snapshot, depth: usize, busy: &[(&str, u32, Millis)]) -> Snapshot {
    snap.mode = PolicyMode::Planned(params(depth, 1_000 * MIN));
    snap.busy_until =
        busy.iter().map(|&(node, gpu, until)| BusyGpu::new(on(&snap, node), gpu, (0, 0), 0, until)).collect();
    snap
}

/// The position of `node`'s placement in the snapshot.
pub(super) fn on(snap: &Snapshot, node: &str) -> Option<usize> {
    snap.placements.iter().position(|p| p.node == node)
}

/// `planned` with every planned job booking its start (v2's drains), and
/// every overdue job lifted ahead (v2's order): the base the other tests of
/// `planned` change.
pub(super) fn params(depth: usize, max_wait_ms: Millis) -> PlannedParams {
    PlannedParams {
        depth,
        max_wait_ms,
        lift_percent: 100,
        lift_ahead_of_light: u32::MAX,
        drains: None,
        drain_after_percent: 0,
        charge_drains: false,
        predicted_ends: false,
    }
}

pub(super) fn limit(mut j: QueuedJob, minutes: i64) -> QueuedJob {
    j.time_limit_ms = minutes * MIN;
    j
}

/// GPU 1 of node `a` runs until +30 min; the rank-1 2-GPU job is planned
/// there at +30, and its idle GPU will be held from +20. Behind it, a job
/// that ends by then starts on the idle GPU; one that would still run
/// then waits (it would break the plan's hold).
#[test]
fn a_later_job_backfills_only_when_it_ends_before_the_plan() {
    for (minutes, starts) in [(10, true), (20, true), (21, false), (30, false), (60, false)] {
        let snap = planned(
            snapshot(
                vec![state("a", "rtx4090", 2, &[0])],
                &[(BCG, 1.0), (KDG, 2.0)],
                vec![limit(job(1, BCG, 2, 0), 60), limit(job(2, KDG, 1, 0), minutes)],
            ),
            1,
            &[("a", 1, NOW + 30 * MIN)],
        );
        let plan = decide(&snap);
        assert!(dispatch_of(&plan, 1).is_none());
        let PendingReason::Planned { start_ms, .. } = waiting_of(&plan, 1).reason else { panic!("job 1 is planned") };
        assert_eq!(start_ms, NOW + 30 * MIN);
        assert_eq!(dispatch_of(&plan, 2).is_some(), starts, "a {minutes}-minute job");
        if !starts {
            assert_eq!(waiting_of(&plan, 2).reason, PendingReason::WaitingForHigherRank);
        }
    }
}

/// Job 1 holds GPU 0 of `a` for its start at +5; a job of a lower-usage
/// lab becomes rank 1. The seed would release job 1's GPUs; planned keeps
/// its placement and plans the newcomer on `b`.
#[test]
fn a_planned_job_keeps_its_placement_when_rank_one_changes() {
    let mut holder = limit(job(1, KDG, 2, 0), 60);
    holder.reservation = Some(Box::new(Reservation {
        node: "a".into(),
        tier: "rtx4090".into(),
        gpus: vec![0],
        drained: 0,
        accrued_at_ms: NOW - MIN,
    }));
    let snap = planned(
        snapshot(
            vec![state("a", "rtx4090", 2, &[0]), state("b", "rtx4090", 2, &[0])],
            &[(BCG, 1.0), (KDG, 2.0)],
            vec![holder, limit(job(3, BCG, 2, 5), 60)],
        ),
        2,
        &[("a", 1, NOW + 5 * MIN), ("b", 1, NOW + 5 * MIN)],
    );
    let plan = decide(&snap);
    assert!(plan.releases.is_empty(), "{:?}", plan.releases);
    let first = waiting_of(&plan, 3);
    assert_eq!(first.rank, 1);
    assert!(matches!(&first.reason, PendingReason::Planned { node, .. } if node == "b"), "{:?}", first.reason);
    let kept = waiting_of(&plan, 1);
    assert_eq!(kept.rank, 2);
    assert_eq!(kept.reservation.as_ref().map(|r| (r.node.as_str(), r.gpus.clone())), Some(("a", vec![0])));
    assert_eq!(
        kept.reason,
        PendingReason::Planned { node: "a".into(), tier: "rtx4090".into(), start_ms: NOW + 5 * MIN, held: 1, need: 2 }
    );
    // the seed, by contrast, lets the new rank 1 take the reservation's place
    let seed = decide(&Snapshot { mode: PolicyMode::Seed, ..snap });
    assert_eq!(seed.releases.len(), 1);
}

/// GPUs held for a planned start go to nobody behind it, however short.
#[test]
fn held_gpus_never_go_to_later_jobs() {
    let snap = planned(
        snapshot(
            vec![state("a", "rtx4090", 2, &[0])],
            &[(BCG, 1.0), (KDG, 2.0)],
            vec![limit(job(1, BCG, 2, 0), 60), limit(job(2, KDG, 1, 0), 1)],
        ),
        1,
        &[("a", 1, NOW + 5 * MIN)],
    );
    let plan = decide(&snap);
    assert_eq!(waiting_of(&plan, 1).reservation.as_ref().map(|r| r.gpus.clone()), Some(vec![0]));
    assert!(dispatch_of(&plan, 2).is_none(), "a 1-minute job would end before the start, but the GPU is held");
}

/// A job waiting past `max_wait` goes ahead of fair share.
#[test]
fn a_job_waiting_past_max_wait_goes_first() {
    let queue = vec![limit(job(1, KDG, 1, 0), 60), limit(job(2, BCG, 1, NOW - MIN), 60)];
    let snap = snapshot(vec![state("a", "rtx4090", 2, &[0])], &[(BCG, 1.0), (KDG, 1_000.0)], queue);
    let fair = decide(&Snapshot { mode: PolicyMode::Planned(params(10, 60 * MIN)), ..snap.clone() });
    assert!(dispatch_of(&fair, 2).is_some(), "fair share: the low-usage lab first");
    let overdue = decide(&Snapshot { mode: PolicyMode::Planned(params(10, 5 * MIN)), ..snap });
    assert!(dispatch_of(&overdue, 1).is_some(), "job 1 waited 10 min, past 5");
    assert_eq!(waiting_of(&overdue, 2).rank, 2);
}

fn lifting(max_wait_ms: Millis, gpus: u64) -> planned::Lift {
    planned::Lift { max_wait_ms, gpus, behind: 0, ahead: u32::MAX }
}

/// The ids of `queue` (in its order) after the overdue are lifted.
pub(super) fn lifted(queue: &[QueuedJob], lift: planned::Lift) -> Vec<JobId> {
    planned::overdue_first(queue, (0..queue.len()).collect(), NOW, lift).into_iter().map(|at| queue[at].id).collect()
}

/// Overdue jobs go first, oldest first, only while their GPUs fit in the
/// lift: under overload the rest keep the fair-share order (§11).
#[test]
fn overdue_jobs_are_lifted_only_within_the_bound() {
    // in fair-share order: a fresh job of a light lab, then the heavy
    // lab's three overdue ones (oldest: the 8-GPU job 2)
    let queue = || vec![job(1, BCG, 1, NOW), job(2, KDG, 8, 0), job(3, KDG, 8, MIN), job(4, KDG, 1, 2 * MIN)];
    for (lift, order) in [
        (100, [2, 3, 4, 1]),
        (17, [2, 3, 4, 1]),
        (16, [2, 3, 1, 4]),
        (9, [2, 1, 3, 4]),
        (8, [2, 1, 3, 4]),
        (0, [2, 1, 3, 4]), // the oldest always: every job starts in bounded time
    ] {
        let got: Vec<JobId> = lifted(&queue(), lifting(5 * MIN, lift));
        assert_eq!(got, order, "lift {lift} GPUs");
    }
    let none_overdue: Vec<JobId> = lifted(&queue(), lifting(60 * MIN, 0));
    assert_eq!(none_overdue, [1, 2, 3, 4]);
    let cluster = snapshot(vec![state("a", "rtx4090", 8, &[]), state("b", "rtx4090", 8, &[])], &[], vec![]);
    for (percent, gpus) in [(0, 0), (10, 2), (50, 8), (100, 16)] {
        assert_eq!(planned::lift_gpus(&cluster, percent), gpus, "{percent} %");
    }
}

/// The planned reason reads with its place, time and hold.
#[test]
fn the_planned_reason_names_place_time_and_hold() {
    let r = PendingReason::Planned {
        node: "node-4090".into(),
        tier: "rtx4090".into(),
        start_ms: 1_764_857_400_000,
        held: 1,
        need: 2,
    };
    assert_eq!(r.to_string(), "PLANNED (1/2 GPUs held on node-4090/rtx4090, start 2025-12-04T14:10Z)");
    assert_eq!(r.code(), "PLANNED");
}

/// A GPU whose job is past its limit or cancelled (its end is `now` or
/// earlier) is still busy until the job is seen to end: no job starts on
/// it. A 1-GPU job is planned there instead of started.
#[test]
fn a_gpu_whose_job_is_due_to_end_is_not_started_on() {
    for until in [NOW - MIN, NOW] {
        let snap = planned(
            snapshot(vec![state("a", "rtx4090", 1, &[])], &[(BCG, 1.0)], vec![job(1, BCG, 1, 0)]),
            1,
            &[("a", 0, until)],
        );
        let plan = decide(&snap);
        assert!(dispatch_of(&plan, 1).is_none(), "the job is not started on a busy GPU (end {until})");
        assert!(matches!(waiting_of(&plan, 1).reason, PendingReason::Planned { start_ms, .. } if start_ms > NOW));
    }
}

/// GPU 0 of `a` is busy for two jobs (a cancelled one still ending, and
/// the next): it counts once, so the placement is still whole for a
/// 2-GPU job, planned there (GPU 1, whose end is unknown, frees in a day).
#[test]
fn a_gpu_busy_for_two_jobs_counts_once() {
    let snap = planned(
        snapshot(vec![state("a", "rtx4090", 2, &[])], &[(BCG, 1.0)], vec![limit(job(1, BCG, 2, 0), 60)]),
        1,
        &[("a", 0, NOW + MIN), ("a", 0, NOW + 2 * MIN)],
    );
    let plan = decide(&snap);
    let reason = &waiting_of(&plan, 1).reason;
    assert!(
        matches!(reason, PendingReason::Planned { start_ms, .. } if *start_ms == NOW + 24 * 60 * MIN),
        "{reason:?}"
    );
}

/// `a` and `b` each run a job on GPU 1; `a`'s limit ends at +30, `b`'s at
/// +60 but its job is predicted to end at +10. Planning with limits, the
/// 2-GPU job drains `a` for +30; with predicted ends, `b` for +10, close
/// enough to hold `b`'s idle GPU already.
#[test]
fn predicted_ends_choose_the_placement_whose_residents_leave_first() {
    for (predicted, node, start, held) in [(false, "a", 30, 0), (true, "b", 10, 1)] {
        let mut snap = planned(
            snapshot(
                vec![state("a", "rtx4090", 2, &[0]), state("b", "rtx4090", 2, &[0])],
                &[(BCG, 1.0)],
                vec![limit(job(1, BCG, 2, 0), 60)],
            ),
            1,
            &[("a", 1, NOW + 30 * MIN), ("b", 1, NOW + 60 * MIN)],
        );
        snap.busy_until[1].predicted_ms = NOW + 10 * MIN;
        snap.mode = PolicyMode::Planned(PlannedParams { predicted_ends: predicted, ..params(1, 1_000 * MIN) });
        let plan = decide(&snap);
        let PendingReason::Planned { node: at, start_ms, held: h, .. } = &waiting_of(&plan, 1).reason else {
            panic!("job 1 is planned")
        };
        assert_eq!((at.as_str(), *start_ms, *h), (node, NOW + start * MIN, held), "predicted ends {predicted}");
    }
}

proptest::proptest! {
    /// The start search skips a placement whose open bound is later than
    /// the best start found: no start there may be earlier, whatever its
    /// GPUs' ends, the bookings made before and the job's size and limit.
    #[test]
    fn no_start_is_earlier_than_its_placements_open_bound(
        ends in proptest::collection::vec(0i64..=120, 8),
        booked in proptest::collection::vec(proptest::option::of((0i64..=180, 1i64..=120, 0i64..=60, 1i64..=120)), 8),
        n in 1u32..=8,
        minutes in 1i64..=240,
    ) {
        // GPU g busy until `ends[g]` minutes from now (0: free now)
        let free: Vec<u32> = (0..8).filter(|&g| ends[g as usize] == 0).collect();
        let busy: Vec<(&str, u32, Millis)> =
            (0..8).filter(|&g| ends[g as usize] > 0).map(|g| ("a", g, NOW + ends[g as usize] * MIN)).collect();
        let snap = planned(snapshot(vec![state("a", "rtx4090", 8, &free)], &[(BCG, 0.0)], vec![]), 1, &busy);
        let mut time = timeline::Timeline::new(&snap);
        // up to two bookings a GPU, one after the other
        for (g, b) in booked.iter().enumerate() {
            if let Some((start, len, gap, len2)) = *b {
                let first = NOW + start * MIN;
                time.book(0, &[g as u32], first, first + len * MIN, 90 + g as JobId);
                let second = first + (len + gap) * MIN + timeline::HOLD_AHEAD_MS;
                time.book(0, &[g as u32], second, second + len2 * MIN, 80 + g as JobId);
            }
        }
        let j = limit(job(1, BCG, n, 0), minutes);
        let at = time.earliest(0, &j).expect("8 GPUs fit any size up to 8");
        proptest::prop_assert!(at >= time.open_bound(0, n), "start {at} before the bound {}", time.open_bound(0, n));
        proptest::prop_assert!(time.open_bound(0, n) >= time.lower_bound(0, n));
    }
}

/// A free GPU is free at any now, the earliest time a clock could give
/// too (the timeline once marked unlisted GPUs with that time).
#[test]
fn a_free_gpu_at_the_earliest_time_is_free() {
    let mut snap = snapshot(vec![state("n", "rtx4090", 2, &[0, 1])], &[], vec![job(1, BCG, 1, Millis::MIN)]);
    snap.now_ms = Millis::MIN;
    snap.mode = PolicyMode::Planned(params(4, Millis::MAX));
    let plan = decide(&snap);
    assert_eq!(plan.dispatches.iter().map(|d| (d.job, d.gpus.clone())).collect::<Vec<_>>(), vec![(1, vec![0])]);
}
