//! The decision core: one dispatch cycle (policy §3–§5, §9, §10) as a pure
//! function from a [`Snapshot`] to a [`Plan`]. No I/O, no clock, no async:
//! the server loop and the simulator both call [`decide`].

use app::model::MaintenancePhase;

use super::model::*;
use super::placements::Placements;
pub use super::steps::next_phase;
use super::steps::{advance_maintenance, charge_reservation, fair_share_order, waiting};
use super::usage;

/// Decides one cycle, by the rules `snap.mode` names.
pub fn decide(snap: &Snapshot) -> Plan {
    match snap.mode {
        PolicyMode::Seed => decide_seed(snap),
        PolicyMode::Planned(params) => super::planned::decide(snap, &params),
    }
}

/// Policy §1–§10 exactly.
fn decide_seed(snap: &Snapshot) -> Plan {
    let mut plan = Plan::default();
    let dispatching = advance_maintenance(snap, &mut plan) == MaintenancePhase::Normal;
    let mut queue: Vec<QueuedJob> = snap.queue.clone();
    super::personal::promote(snap, &mut plan, &mut queue);
    let mut queue = fair_share_order(snap, queue);
    let mut places = Placements::new(&snap.placements, &snap.tiers);
    let holder = keep_or_release_reservations(snap, &mut plan, &mut queue, &mut places, dispatching);
    for (pos, job) in queue.into_iter().enumerate() {
        let turn = Turn { rank: pos as u32 + 1, own: holder.filter(|h| h.0 == pos).map(|h| h.1), now: snap.now_ms };
        if !dispatching {
            plan.waiting.push(waiting(job, turn.rank, PendingReason::Maintenance));
        } else {
            place(&mut plan, &mut places, job, turn);
        }
    }
    plan
}

/// Reservation upkeep: accrue to now, then R1/R3 (only rank 1 keeps one),
/// R5 (the placement must still fit) and maintenance releases, each
/// charged at once. Returns the holder: (queue position, slot).
fn keep_or_release_reservations(
    snap: &Snapshot,
    plan: &mut Plan,
    queue: &mut [QueuedJob],
    places: &mut Placements,
    dispatching: bool,
) -> Option<(usize, usize)> {
    let tflops_of = |tier: &str| snap.tiers.iter().find(|t| t.name == tier).map_or(0.0, |t| t.tflops);
    let mut holder: Option<(usize, usize)> = None;
    for (pos, job) in queue.iter_mut().enumerate() {
        let Some(mut res) = job.reservation.take() else { continue };
        let tflops = tflops_of(&res.tier);
        usage::accrue(&mut res, &mut job.accrued, tflops, snap.now_ms);
        let slot = places.find(&res.node, &res.tier);
        let release = if !dispatching {
            Some(ReleaseReason::Maintenance)
        } else if pos != 0 || job.num_gpus < 2 || holder.is_some() {
            Some(ReleaseReason::Demoted)
        } else if slot.is_none_or(|i| !places.fits(i, job)) {
            Some(ReleaseReason::PlacementLost)
        } else {
            None
        };
        match (release, slot) {
            (Some(reason), _) => {
                plan.releases.push(Release { job: job.id, node: res.node.clone(), tier: res.tier.clone(), reason });
                charge_reservation(plan, job, &res.tier);
            }
            (None, Some(i)) => {
                // only GPUs still free can stay reserved; the seed drains
                // nothing (one left by `planned` before a switch was
                // charged up to now above)
                res.gpus.retain(|g| places.slots[i].idle.contains(g));
                res.drained = 0;
                places.take(i, &res.gpus.clone(), true);
                job.reservation = Some(res);
                holder = Some((pos, i));
            }
            (None, None) => unreachable!("a kept reservation has a placement"),
        }
    }
    holder
}

/// A job's turn in the walk of the queue.
#[derive(Clone, Copy)]
struct Turn {
    rank: u32,
    /// The slot of the reservation it holds, if it holds one.
    own: Option<usize>,
    now: Millis,
}

/// One job, in queue order: (a) dispatch to the best available placement,
/// else (b) absorb idle GPUs into its reservation, else (c) start one
/// (rank-1 multi-GPU jobs), else wait (§9).
fn place(plan: &mut Plan, places: &mut Placements, mut job: QueuedJob, turn: Turn) {
    if let Some(i) = dispatch_target(places, &job, turn.own) {
        dispatch(plan, places, job, turn, i);
        return;
    }
    if let (Some(i), Some(res)) = (turn.own, job.reservation.as_mut()) {
        let missing = job.num_gpus as usize - res.gpus.len();
        let extra: Vec<u32> = places.slots[i].idle.iter().copied().take(missing).collect();
        places.take(i, &extra, true);
        res.gpus.extend(extra);
        res.gpus.sort_unstable();
        // complete means (a) would have dispatched it above
        let reason = reserving_reason(res, job.num_gpus);
        plan.waiting.push(waiting(job, turn.rank, reason));
        return;
    }
    if turn.rank == 1 && job.num_gpus >= 2 && job.reservation.is_none() {
        if let Some(i) = places.best_to_reserve(&job) {
            let gpus: Vec<u32> = places.slots[i].idle.iter().copied().take(job.num_gpus as usize).collect();
            places.take(i, &gpus, true);
            let slot = &places.slots[i];
            let res = Reservation {
                node: slot.state.node.clone(),
                tier: slot.state.tier.clone(),
                gpus,
                drained: 0,
                accrued_at_ms: turn.now,
            };
            let reason = reserving_reason(&res, job.num_gpus);
            job.reservation = Some(Box::new(res));
            plan.waiting.push(waiting(job, turn.rank, reason));
            return;
        }
    }
    let reason = if places.could_fit_at_cycle_start(&job) {
        PendingReason::WaitingForHigherRank
    } else if job.min_vram_gb > 0 {
        PendingReason::NoIdleLargeGpu { min_vram_gb: job.min_vram_gb }
    } else {
        PendingReason::NoIdleGpu
    };
    plan.waiting.push(waiting(job, turn.rank, reason));
}

/// The best placement the job can start on now; a holder counts its own
/// reserved GPUs as available on its placement.
fn dispatch_target(places: &Placements, job: &QueuedJob, own: Option<usize>) -> Option<usize> {
    let mut target = places.best_available(job);
    if let Some(i) = own {
        let have = places.slots[i].idle.len() + places.slots[i].reserved.len();
        if have >= job.num_gpus as usize && better_or_equal(places, i, have as u32, target) {
            target = Some((i, have as u32));
        }
    }
    target.map(|(i, _)| i)
}

/// Dispatches the job on slot `i`, giving up its reservation (a swap when
/// that was elsewhere).
fn dispatch(plan: &mut Plan, places: &mut Placements, mut job: QueuedJob, turn: Turn, i: usize) {
    let swapped_from = match (turn.own, job.reservation.take()) {
        (Some(r), Some(res)) if r != i => {
            places.unreserve(r, &res.gpus);
            Some((res.node, res.tier))
        }
        (Some(r), Some(res)) => {
            places.unreserve(r, &res.gpus);
            None
        }
        _ => None,
    };
    let gpus = choose_gpus(places, i, job.num_gpus);
    places.take(i, &gpus, false);
    let slot = &places.slots[i];
    plan.dispatches.push(Dispatch {
        job: job.id,
        rank: turn.rank,
        node: slot.state.node.clone(),
        tier: slot.state.tier.clone(),
        reclaim_backfill: gpus.iter().copied().filter(|g| slot.backfill.contains(g)).collect(),
        gpus,
        accrued: job.accrued,
        swapped_from,
    });
}

/// Is slot `i` with `have` available GPUs at least as good as `other`
/// under the dispatch order (sort_order desc, fewest idle, node name)?
fn better_or_equal(places: &Placements, i: usize, have: u32, other: Option<(usize, u32)>) -> bool {
    let Some((j, idle)) = other else { return true };
    let (a, b) = (&places.slots[i], &places.slots[j]);
    let key_a = (-a.tier.sort_order, have, a.state.node.as_str(), i);
    let key_b = (-b.tier.sort_order, idle, b.state.node.as_str(), j);
    key_a <= key_b
}

/// GPUs for a dispatch on slot `i`: its reserved ones first, then idle
/// GPUs without backfill (no reclaim needed), then backfill GPUs.
fn choose_gpus(places: &Placements, i: usize, n: u32) -> Vec<u32> {
    let slot = &places.slots[i];
    let plain = slot.idle.iter().filter(|g| !slot.backfill.contains(g));
    let busy = slot.idle.iter().filter(|g| slot.backfill.contains(g));
    let mut gpus: Vec<u32> = slot.reserved.iter().chain(plain).chain(busy).copied().take(n as usize).collect();
    gpus.sort_unstable();
    gpus
}

fn reserving_reason(res: &Reservation, need: u32) -> PendingReason {
    PendingReason::Reserving { have: res.gpus.len() as u32, need, node: res.node.clone(), tier: res.tier.clone() }
}
