//! Table-driven tests of each policy rule, with the policy's own numbers.

use app::model::{JobState, MaintenancePhase};

use super::model::*;
use super::world::{PlacementDef, World};
use super::*;

pub(super) const MIN: Millis = 60_000;

fn tier(name: &str, sort_order: i64, tflops: f64, vram_gb: u32, max_gpus: u32) -> TierInfo {
    TierInfo { name: name.into(), tflops, vram_gb, sort_order, max_gpus, active: true }
}

pub(super) fn rtx4090() -> TierInfo {
    tier("rtx4090", 20, 82.6, 24, 2)
}

fn rtx3080ti() -> TierInfo {
    tier("rtx3080ti", 10, 34.1, 12, 2)
}

fn place(node: &str, tier: &str, capacity: u32) -> PlacementDef {
    PlacementDef { node: node.into(), tier: tier.into(), gpus: (0..capacity).collect(), usable: true }
}

/// A placement state with `capacity` GPUs of which `free` are not in use.
pub(super) fn state(node: &str, tier: &str, capacity: u32, free: &[u32]) -> PlacementState {
    PlacementState {
        node: node.into(),
        tier: tier.into(),
        capacity,
        usable: true,
        free: free.to_vec(),
        backfill: vec![],
    }
}

pub(super) fn job(id: JobId, lab: LabId, num_gpus: u32, entered: Millis) -> QueuedJob {
    QueuedJob {
        id,
        lab,
        user: id * 100,
        num_gpus,
        queue_entered_at_ms: entered,
        min_vram_gb: 0,
        reservation: None,
        accrued: Accrued::default(),
        time_limit_ms: 60 * MIN,
    }
}

pub(super) fn snapshot(placements: Vec<PlacementState>, labs: &[(LabId, f64)], queue: Vec<QueuedJob>) -> Snapshot {
    Snapshot {
        now_ms: 10 * MIN,
        phase: MaintenancePhase::Normal,
        tiers: vec![rtx4090(), rtx3080ti(), tier("big", 20, 100.0, 80, 8)],
        placements,
        labs: labs.iter().map(|&(lab, value)| LabUsage { lab, value, as_of_ms: 10 * MIN }).collect(),
        queue,
        personal: vec![],
        users: vec![],
        arrays: vec![],
        research_active: 0,
        backfill_active: 0,
        mode: PolicyMode::Seed,
        busy_until: vec![],
    }
}

fn ranks(plan: &Plan) -> Vec<(JobId, u32)> {
    let mut r: Vec<_> =
        plan.waiting.iter().map(|w| (w.job, w.rank)).chain(plan.dispatches.iter().map(|d| (d.job, d.rank))).collect();
    r.sort_by_key(|x| x.1);
    r
}

pub(super) fn dispatch_of(plan: &Plan, job: JobId) -> Option<&Dispatch> {
    plan.dispatches.iter().find(|d| d.job == job)
}

pub(super) fn waiting_of(plan: &Plan, job: JobId) -> &Waiting {
    plan.waiting.iter().find(|w| w.job == job).expect("job waits")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

pub(super) const BCG: LabId = 1;
pub(super) const KDG: LabId = 2;
const OSL: LabId = 3;

#[test]
fn the_global_queue_orders_by_usage_then_entry_then_id() {
    struct Case {
        what: &'static str,
        labs: &'static [(LabId, f64)],
        jobs: Vec<QueuedJob>,
        order: &'static [JobId],
    }
    let cases = [
        Case {
            what: "the policy's four-job example: A, B, C, D",
            labs: &[(BCG, 24_000.0), (KDG, 30_000.0), (OSL, 116_000.0)],
            // D entered first, C before A: usage still decides
            jobs: vec![job(1, BCG, 2, 40), job(2, KDG, 1, 30), job(3, OSL, 2, 20), job(4, OSL, 1, 25)],
            order: &[1, 2, 3, 4],
        },
        Case {
            what: "same usage: earlier queue entry first",
            labs: &[(BCG, 5.0), (KDG, 5.0)],
            jobs: vec![job(1, BCG, 1, 50), job(2, KDG, 1, 10)],
            order: &[2, 1],
        },
        Case {
            what: "same usage and entry: lower id first",
            labs: &[(BCG, 5.0)],
            jobs: vec![job(9, BCG, 1, 10), job(3, BCG, 1, 10)],
            order: &[3, 9],
        },
        Case {
            what: "a lab with no usage row counts as zero",
            labs: &[(BCG, 1.0)],
            jobs: vec![job(1, BCG, 1, 0), job(2, OSL, 1, 99)],
            order: &[2, 1],
        },
    ];
    for c in cases {
        // no idle GPU anywhere, so nothing dispatches and every job has a rank
        let plan = decide(&snapshot(vec![state("n1", "rtx4090", 2, &[])], c.labs, c.jobs));
        let got: Vec<JobId> = ranks(&plan).into_iter().map(|r| r.0).collect();
        assert_eq!(got, c.order, "{}", c.what);
    }
}

#[test]
fn dispatch_picks_the_best_placement() {
    struct Case {
        what: &'static str,
        placements: Vec<PlacementState>,
        job: QueuedJob,
        expect: Option<(&'static str, &'static str)>,
    }
    let vram13 = QueuedJob { min_vram_gb: 13, ..job(1, BCG, 1, 0) };
    let cases = [
        Case {
            what: "higher tier first even with more idle",
            placements: vec![state("a", "rtx3080ti", 2, &[0]), state("b", "rtx4090", 2, &[0, 1])],
            job: job(1, BCG, 1, 0),
            expect: Some(("b", "rtx4090")),
        },
        Case {
            what: "best fit: fewest idle that still fits",
            placements: vec![state("a", "rtx4090", 2, &[0, 1]), state("b", "rtx4090", 2, &[1])],
            job: job(1, BCG, 1, 0),
            expect: Some(("b", "rtx4090")),
        },
        Case {
            what: "best fit never picks a placement that is too small",
            placements: vec![state("a", "rtx4090", 2, &[0, 1]), state("b", "rtx4090", 2, &[1])],
            job: job(1, BCG, 2, 0),
            expect: Some(("a", "rtx4090")),
        },
        Case {
            what: "node name breaks ties",
            placements: vec![state("z", "rtx4090", 2, &[1]), state("m", "rtx4090", 2, &[0])],
            job: job(1, BCG, 1, 0),
            expect: Some(("m", "rtx4090")),
        },
        Case {
            what: "equal sort_order across tiers compares idle counts together",
            placements: vec![state("a", "rtx4090", 2, &[0, 1]), state("b", "big", 8, &[3])],
            job: job(1, BCG, 1, 0),
            expect: Some(("b", "big")),
        },
        Case {
            what: "minimum VRAM after an OOM excludes smaller tiers",
            placements: vec![state("a", "rtx3080ti", 2, &[0, 1]), state("b", "rtx4090", 2, &[])],
            job: vram13,
            expect: None,
        },
        Case {
            what: "a request above the tier's max_gpus never fits",
            placements: vec![state("a", "rtx4090", 4, &[0, 1, 2, 3])],
            job: job(1, BCG, 3, 0),
            expect: None,
        },
        Case {
            what: "a drained node takes nothing",
            placements: vec![PlacementState { usable: false, ..state("a", "rtx4090", 2, &[0, 1]) }],
            job: job(1, BCG, 1, 0),
            expect: None,
        },
    ];
    for c in cases {
        let plan = decide(&snapshot(c.placements, &[], vec![c.job]));
        let got = plan.dispatches.first().map(|d| (d.node.as_str(), d.tier.as_str()));
        assert_eq!(got, c.expect, "{}", c.what);
    }
}

#[test]
fn waiting_jobs_carry_a_pending_reason() {
    // one 4090 GPU free: job 1 (rank 1) takes it, job 2 waits for it
    let plan = decide(&snapshot(
        vec![state("a", "rtx4090", 2, &[0])],
        &[(BCG, 1.0), (KDG, 2.0)],
        vec![job(1, BCG, 1, 0), job(2, KDG, 1, 0), QueuedJob { min_vram_gb: 40, ..job(3, KDG, 1, 0) }],
    ));
    assert_eq!(dispatch_of(&plan, 1).unwrap().gpus, vec![0]);
    assert_eq!(waiting_of(&plan, 2).reason, PendingReason::WaitingForHigherRank);
    // job 3 needs more VRAM than the free 4090 has: it says so
    assert_eq!(waiting_of(&plan, 3).reason, PendingReason::NoIdleLargeGpu { min_vram_gb: 40 });
    assert_eq!(waiting_of(&plan, 3).reason.to_string(), "NO_IDLE_GPU (needs ≥ 40 GB VRAM)");
    assert_eq!(waiting_of(&plan, 3).reason.code(), "NO_IDLE_GPU");
    assert_eq!(PendingReason::NoIdleGpu.to_string(), "NO_IDLE_GPU");
    // with no GPU free at all, a job without a VRAM floor is plainly NO_IDLE_GPU
    let full = decide(&snapshot(vec![state("a", "rtx4090", 2, &[])], &[(BCG, 1.0)], vec![job(4, BCG, 1, 0)]));
    assert_eq!(waiting_of(&full, 4).reason, PendingReason::NoIdleGpu);
    let r = PendingReason::Reserving { have: 1, need: 2, node: "node-4090".into(), tier: "rtx4090".into() };
    assert_eq!(r.to_string(), "RESERVING (1/2 GPUs on node-4090/rtx4090)");
}

#[test]
fn rank_one_reserves_on_the_best_tier_with_most_idle_and_nobody_else_reserves() {
    let plan = decide(&snapshot(
        vec![state("a", "rtx4090", 2, &[]), state("b", "rtx4090", 2, &[1]), state("c", "rtx3080ti", 2, &[])],
        &[(BCG, 1.0), (KDG, 2.0)],
        vec![job(1, BCG, 2, 0), job(2, KDG, 2, 0)],
    ));
    let w1 = waiting_of(&plan, 1);
    let res = w1.reservation.as_ref().expect("rank 1 reserves");
    assert_eq!((res.node.as_str(), res.gpus.clone()), ("b", vec![1]));
    assert_eq!(w1.reason.to_string(), "RESERVING (1/2 GPUs on b/rtx4090)");
    assert!(waiting_of(&plan, 2).reservation.is_none(), "a rank-2 multi-GPU job never reserves");
}

#[test]
fn a_rank_two_multi_gpu_job_never_reserves_even_when_rank_one_is_single() {
    let plan = decide(&snapshot(
        vec![state("a", "rtx4090", 2, &[])],
        &[(BCG, 1.0), (KDG, 2.0)],
        vec![job(1, BCG, 1, 0), job(2, KDG, 2, 0)],
    ));
    assert!(plan.waiting.iter().all(|w| w.reservation.is_none()));
}

#[test]
fn a_single_gpu_job_behind_a_reservation_goes_elsewhere_never_onto_reserved_gpus() {
    let mut w = World::new(vec![rtx4090(), rtx3080ti()], vec![place("a", "rtx4090", 2), place("b", "rtx3080ti", 2)]);
    // busy: one GPU on each placement
    w.submit(90, OSL, 900, 1);
    w.submit(91, OSL, 901, 1);
    w.set_lab_usage(OSL, 1e9);
    w.cycle();
    w.submit(92, OSL, 902, 1);
    w.submit(93, OSL, 903, 1);
    w.cycle();
    // now all four GPUs run OSL jobs; end one on each placement
    let on = |w: &World, node: &str| {
        w.jobs.values().find(|j| j.running.as_ref().is_some_and(|r| r.node == node)).unwrap().id
    };
    let (a, b) = (on(&w, "a"), on(&w, "b"));
    w.now += MIN;
    w.end(a, JobState::Completed);
    w.end(b, JobState::Completed);
    w.set_lab_usage(BCG, 0.0);
    w.set_lab_usage(KDG, 1.0);
    w.submit(1, BCG, 10, 2);
    w.submit(2, KDG, 20, 1);
    let plan = w.cycle();
    let res = waiting_of(&plan, 1).reservation.clone().expect("X reserves");
    assert_eq!(res.node, "a", "best tier");
    let d = dispatch_of(&plan, 2).expect("the 1-GPU job starts elsewhere");
    assert_eq!(d.node, "b");
    // with nothing else idle, it waits rather than take the reserved GPU
    w.now += MIN;
    w.end(2, JobState::Completed);
    w.submit(3, KDG, 21, 1);
    w.submit(4, KDG, 22, 1);
    let plan = w.cycle();
    let started: Vec<&str> = plan.dispatches.iter().map(|d| d.node.as_str()).collect();
    assert_eq!(started, vec!["b"], "only b's free GPU is used");
    assert!(plan.waiting.iter().any(|x| x.job == 4 && x.reason == PendingReason::WaitingForHigherRank));
}

#[test]
fn swap_dispatches_on_the_placement_that_frees_and_keeps_the_accrued_cost() {
    let mut snap = snapshot(
        vec![state("a", "rtx4090", 2, &[0]), state("b", "rtx4090", 2, &[0, 1])],
        &[(BCG, 1.0)],
        vec![QueuedJob {
            reservation: Some(Box::new(Reservation {
                node: "a".into(),
                tier: "rtx4090".into(),
                gpus: vec![0],
                drained: 0,
                accrued_at_ms: 5 * MIN,
            })),
            ..job(1, BCG, 2, 0)
        }],
    );
    snap.queue.push(job(2, KDG, 1, 0));
    snap.labs.push(LabUsage { lab: KDG, value: 2.0, as_of_ms: 0 });
    let plan = decide(&snap);
    let d = dispatch_of(&plan, 1).expect("dispatched");
    assert_eq!((d.node.as_str(), d.gpus.clone()), ("b", vec![0, 1]));
    assert_eq!(d.swapped_from, Some(("a".into(), "rtx4090".into())));
    // 1 GPU reserved 5 min: accrued, kept for the lazy charge, not charged now
    assert!(close(d.accrued.cost, 24_780.0), "{}", d.accrued.cost);
    assert!(plan.charges.is_empty(), "R4: nothing charged at swap");
    // the released GPU is idle again for the next job
    assert_eq!(dispatch_of(&plan, 2).map(|d| (d.node.as_str(), d.gpus.clone())), Some(("a", vec![0])));
}

#[test]
fn absorbing_then_dispatching_on_the_reserved_placement() {
    let mut w = World::new(vec![rtx4090()], vec![place("a", "rtx4090", 2)]);
    w.submit(50, OSL, 500, 1);
    w.submit(51, OSL, 501, 1);
    w.set_lab_usage(OSL, 1e9);
    w.cycle(); // both GPUs busy
    w.set_lab_usage(BCG, 0.0);
    w.submit(1, BCG, 10, 2);
    let plan = w.cycle();
    assert_eq!(waiting_of(&plan, 1).reason.to_string(), "RESERVING (0/2 GPUs on a/rtx4090)");
    w.now += MIN;
    w.end(50, JobState::Completed);
    let plan = w.cycle();
    assert_eq!(waiting_of(&plan, 1).reason.to_string(), "RESERVING (1/2 GPUs on a/rtx4090)");
    w.now += 2 * MIN;
    let usage_before = w.lab_usage(BCG);
    w.cycle();
    assert_eq!(w.lab_usage(BCG), usage_before, "R4: holding a reservation adds nothing to usage");
    w.now += 2 * MIN;
    w.end(51, JobState::Completed);
    let plan = w.cycle();
    let d = dispatch_of(&plan, 1).expect("complete → dispatched");
    assert_eq!(d.gpus, vec![0, 1]);
    // 1 GPU held 4 minutes
    assert!(close(d.accrued.cost, 4.0 * 60.0 * 82.6), "{}", d.accrued.cost);
    // run 30 min on 2 GPUs, then the end charges run + reservation at once
    w.now += 30 * MIN;
    w.end(1, JobState::Completed);
    let bcg: f64 = w.ledger.iter().filter(|c| c.lab == BCG).map(|c| c.amount).sum();
    assert!(close(bcg, 2.0 * 1800.0 * 82.6 + 240.0 * 82.6), "{bcg}");
}

#[test]
fn the_r3_scenario_step_by_step() {
    let mut w = World::new(vec![rtx4090()], vec![place("node-4090", "rtx4090", 2)]);
    w.set_lab_usage(BCG, 24_000.0);
    w.set_lab_usage(KDG, 28_000.0);
    // job Y (BCG, another user) runs on one GPU
    w.submit(2, BCG, 11, 1);
    w.cycle();
    // T+0: X (BCG, 2 GPUs) is rank 1 and reserves 1 of 2; KDG's K waits
    w.submit(1, BCG, 10, 2);
    w.submit(3, KDG, 20, 1);
    let plan = w.cycle();
    assert_eq!(waiting_of(&plan, 1).rank, 1);
    assert_eq!(waiting_of(&plan, 1).reason.to_string(), "RESERVING (1/2 GPUs on node-4090/rtx4090)");
    let t0 = w.now;
    // T+5 min: Y ends and is charged; BCG is now above KDG
    w.now = t0 + 5 * MIN;
    w.end(2, JobState::Completed);
    assert!(w.lab_usage(BCG) > w.lab_usage(KDG));
    // next cycle: X is rank 2 → released, BCG charged 1 × 300 × 82.6
    let plan = w.cycle();
    assert_eq!(
        plan.releases,
        vec![Release { job: 1, node: "node-4090".into(), tier: "rtx4090".into(), reason: ReleaseReason::Demoted }]
    );
    let x_charges: Vec<&Charge> = w.ledger.iter().filter(|c| c.job == 1).collect();
    assert_eq!(x_charges.len(), 1);
    assert!(close(x_charges[0].amount, 24_780.0), "{}", x_charges[0].amount);
    assert_eq!(x_charges[0].lab, BCG);
    assert!(dispatch_of(&plan, 3).is_some(), "KDG's job is rank 1 now and starts");
    let x = &w.jobs[&1];
    assert_eq!((x.state, x.queue_entered_ms, x.reservation.clone()), (JobState::GlobalQueueWait, t0, None));
    // later, once KDG has used more, X is rank 1 again and starts from zero
    w.now = t0 + 15 * MIN;
    w.end(3, JobState::Completed);
    assert!(w.lab_usage(KDG) > w.lab_usage(BCG));
    let plan = w.cycle();
    let d = dispatch_of(&plan, 1).expect("X runs");
    assert_eq!(d.accrued, Accrued::default(), "the released reservation is never charged twice");
}

#[test]
fn losing_the_placement_releases_and_charges_at_once() {
    let mut w = World::new(vec![rtx4090()], vec![place("a", "rtx4090", 2)]);
    w.submit(50, OSL, 500, 1);
    w.set_lab_usage(OSL, 1e9);
    w.cycle();
    w.submit(1, BCG, 10, 2);
    w.cycle();
    assert!(w.jobs[&1].reservation.is_some());
    w.now += 10 * MIN;
    w.placements[0].usable = false; // drained
    let plan = w.cycle();
    assert_eq!(plan.releases[0].reason, ReleaseReason::PlacementLost);
    assert!(close(plan.charges[0].amount, 600.0 * 82.6));
    assert!(w.jobs[&1].reservation.is_none());
}

#[test]
fn single_gpu_dispatch_avoids_reclaiming_backfill_when_it_can() {
    let mut s = snapshot(vec![state("a", "rtx4090", 2, &[0, 1])], &[], vec![job(1, BCG, 1, 0)]);
    s.placements[0].backfill = vec![0];
    let plan = decide(&s);
    assert_eq!(plan.dispatches[0].gpus, vec![1]);
    assert!(plan.dispatches[0].reclaim_backfill.is_empty());
    s.queue = vec![job(1, BCG, 2, 0)];
    let plan = decide(&s);
    assert_eq!(plan.dispatches[0].reclaim_backfill, vec![0], "backfill GPUs count as idle and are reclaimed");
}

#[test]
fn personal_queue_promotes_into_free_slots_in_submission_order() {
    let mut w = World::new(vec![rtx4090()], vec![place("a", "rtx4090", 2)]);
    for id in 1..=4 {
        w.now = id * 1000;
        w.submit(id, BCG, 7, 1);
    }
    let states: Vec<JobState> = w.jobs.values().map(|j| j.state).collect();
    assert_eq!(
        states,
        vec![JobState::GlobalQueueWait, JobState::GlobalQueueWait, JobState::UserQueueWait, JobState::UserQueueWait]
    );
    w.cycle();
    w.now = 10_000;
    w.end(1, JobState::Completed);
    let plan = w.cycle();
    assert_eq!(plan.promotions, vec![3], "oldest personal job first");
    assert_eq!(w.jobs[&3].queue_entered_ms, 10_000, "queue entry is the promotion time");
    assert_eq!(w.jobs[&4].state, JobState::UserQueueWait);
}

#[test]
fn maintenance_dispatches_nothing_and_advances_by_itself() {
    let mut w = World::new(vec![rtx4090()], vec![place("a", "rtx4090", 2)]);
    w.submit(1, BCG, 10, 1);
    w.cycle();
    w.phase = MaintenancePhase::Draining;
    w.submit(2, KDG, 20, 1);
    let plan = w.cycle();
    assert!(plan.dispatches.is_empty());
    assert_eq!(waiting_of(&plan, 2).reason, PendingReason::Maintenance);
    assert_eq!(plan.phase_change, None, "research still runs");
    w.end(1, JobState::Completed);
    w.backfill.insert(("a".into(), "rtx4090".into()), vec![0]);
    let plan = w.cycle();
    assert_eq!(plan.phase_change, Some(MaintenancePhase::BackfillRecovery));
    w.backfill.clear();
    let plan = w.cycle();
    assert_eq!(plan.phase_change, Some(MaintenancePhase::Active));
    assert!(plan.dispatches.is_empty());
    w.phase = MaintenancePhase::Normal; // the admin ends maintenance
    let plan = w.cycle();
    assert_eq!(dispatch_of(&plan, 2).map(|d| d.rank), Some(1));
}
