//! The `planned` policy (§11): the seed's order, slots, charging and
//! maintenance, with a start plan instead of the single rank-1
//! reservation.
//!
//! Each cycle the first `depth` jobs of the order (light labs' jobs in
//! fair-share order, then jobs waiting past `max_wait`, oldest first, then
//! the rest in fair-share order) get, in turn, the earliest start any
//! fitting placement can give them — running jobs end at their time
//! limits, and each plan books its GPUs from its start for its own limit.
//! A job whose start is now is dispatched. GPUs idle now and booked by a
//! plan starting within [`HOLD_AHEAD_MS`] are held for it (charged lazily,
//! §5), and with `charge_drains` so are the booked GPUs left idle before
//! (the drain, [`super::drains`]). A planned job keeps its placement while
//! it stays among the first `depth`. Every other job (and one the drain
//! budget leaves out) starts now only where its own limit ends before
//! every booking on the GPUs it would take (backfill): the plan is never
//! delayed by a job behind it.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use app::model::MaintenancePhase;

use super::drains::{charge_drains, Drains};
use super::model::*;
use super::personal::promote;
use super::steps::{advance_maintenance, charge_reservation, fair_share_positions, waiting};
use super::timeline::{Timeline, HOLD_AHEAD_MS};
use super::usage;

pub(super) fn decide(snap: &Snapshot, params: &PlannedParams) -> Plan {
    let mut plan = Plan::default();
    let dispatching = advance_maintenance(snap, &mut plan) == MaintenancePhase::Normal;
    let mut promoted = Vec::new();
    promote(snap, &mut plan, &mut promoted);
    // the order is worked out on positions, and each job is copied once,
    // when its turn comes (copying thousands of jobs, and moving them
    // twice more into order, was a fifth of a replay at 48×8)
    let queue: Cow<[QueuedJob]> = if promoted.is_empty() {
        Cow::Borrowed(&snap.queue)
    } else {
        Cow::Owned(snap.queue.iter().cloned().chain(promoted).collect())
    };
    let lift = lift_gpus(snap, params.lift_percent);
    let order = fair_share_positions(snap, &queue);
    let light = match params.lift_ahead_of_light {
        u32::MAX => 0,
        _ => light_prefix(snap, order.iter().map(|&at| &queue[at])),
    };
    let lifted = Lift { max_wait_ms: params.max_wait_ms, gpus: lift, behind: light, ahead: params.lift_ahead_of_light };
    let order = overdue_first(&queue, order, snap.now_ms, lifted);
    plan.waiting.reserve(queue.len());
    let mut drains = Drains::new(snap, params, order.iter().map(|&at| &queue[at]));
    let mut time = Timeline::new(snap);
    for (pos, &at) in order.iter().enumerate() {
        let mut job = queue[at].clone();
        let rank = pos as u32 + 1;
        let own = accrue_hold(snap, &mut job, &time);
        if !params.charge_drains {
            // charged up to now above; with the charge off (an admin's
            // switch) a drain stored before accrues no further
            if let Some(res) = job.reservation.as_mut() {
                res.drained = 0;
            }
        }
        if !dispatching {
            release(&mut plan, &mut job, ReleaseReason::Maintenance);
            plan.waiting.push(waiting(job, rank, PendingReason::Maintenance));
        } else if pos < params.depth && drains.may_drain(&job, snap.now_ms) {
            let id = job.id;
            if plan_start(&mut plan, &mut time, job, rank, own) {
                drains.took(id);
            }
        } else {
            release(&mut plan, &mut job, ReleaseReason::Demoted);
            backfill(&mut plan, &mut time, job, rank);
        }
    }
    if params.charge_drains {
        charge_drains(&mut plan, &time);
    }
    plan
}

/// How many GPUs' worth of overdue jobs may go ahead of fair share:
/// `lift_percent` of the cluster's GPUs, rounded up.
pub(super) fn lift_gpus(snap: &Snapshot, lift_percent: u32) -> u64 {
    (usable_gpus(snap) * u64::from(lift_percent)).div_ceil(100)
}

/// The GPUs of the usable placements.
fn usable_gpus(snap: &Snapshot) -> u64 {
    snap.placements.iter().filter(|p| p.usable).map(|p| u64::from(p.capacity)).sum()
}

/// Which overdue jobs go ahead of fair share, and how far.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lift {
    pub max_wait_ms: Millis,
    /// GPUs the lifted jobs may use together (at least the oldest's).
    pub gpus: u64,
    /// Jobs at the head of the order (light labs', [`light_prefix`]) that
    /// lifted jobs go behind…
    pub behind: usize,
    /// …but for the oldest this many, which go ahead of them too.
    pub ahead: u32,
}

/// Jobs that waited `max_wait_ms` or longer go first, oldest first — but
/// only the oldest whose GPUs together fit in `lift.gpus` (always at
/// least the oldest one); the rest keep the fair-share order. Under
/// sustained overload most jobs pass any fixed wait: lifting them all
/// would turn the order into first-come, first-served (measured: median
/// wait from minutes to days). Lifting a bounded share still starts every
/// job in bounded time — the oldest overdue job is always first after
/// light labs' jobs, whose demand fits their share — while light labs'
/// small jobs keep going first among the rest.
///
/// Lifted jobs go behind the first `lift.behind` jobs (light labs') but
/// for the oldest `lift.ahead` (measured on October at 56×8: lifting all
/// of them ahead of light labs made those wait 12.7× their limit).
///
/// `order` is the order so far, as positions of `queue`; so is the result.
pub(super) fn overdue_first(queue: &[QueuedJob], order: Vec<usize>, now: Millis, lift: Lift) -> Vec<usize> {
    let keep = lift.behind.min(order.len());
    // (entered, id, GPUs, place in `order`) of the overdue behind light labs
    let overdue: Vec<Reverse<(Millis, JobId, u64, usize)>> = order[keep..]
        .iter()
        .enumerate()
        .map(|(k, &at)| (&queue[at], keep + k))
        .filter(|(j, _)| now - j.queue_entered_at_ms >= lift.max_wait_ms)
        .map(|(j, k)| Reverse((j.queue_entered_at_ms, j.id, u64::from(j.num_gpus), k)))
        .collect();
    if overdue.is_empty() {
        return order;
    }
    // the oldest, as many as fit in the lift's GPUs (at least one): a few
    // of the thousands overdue under overload, so taken from a heap
    // (sorting them all was a twentieth of a replay at 48×8)
    let mut overdue = BinaryHeap::from(overdue);
    let mut lifted: Vec<usize> = Vec::new();
    let mut used = 0u64;
    while let Some(Reverse((_, _, n, at))) = overdue.pop() {
        if !lifted.is_empty() && used + n > lift.gpus {
            break;
        }
        used += n;
        lifted.push(at);
    }
    let ahead = (lift.ahead as usize).min(lifted.len());
    let mut is_lifted = vec![false; order.len()];
    for &at in &lifted {
        is_lifted[at] = true;
    }
    // places in the new order: the oldest `ahead` lifted, light labs',
    // the other lifted, the rest as they were
    lifted[..ahead]
        .iter()
        .copied()
        .chain(0..keep)
        .chain(lifted[ahead..].iter().copied())
        .chain((keep..order.len()).filter(|&at| !is_lifted[at]))
        .map(|at| order[at])
        .collect()
}

/// How many jobs at the head of the fair-share order are light labs':
/// labs whose decayed usage is at most the mean of the labs with jobs in
/// the queue (their equal share of what is being used), each only as far
/// as its running GPUs and these jobs' stay within its equal share of the
/// cluster (among the labs waiting or running). No overdue job goes ahead
/// of them (§11: light labs do not pay for others' waits); what goes
/// ahead fits their share, so an overdue job behind them still starts in
/// bounded time. (Usage alone would not bound it: a run is charged when
/// it ends, and a lab filling the cluster with long jobs stays light
/// until then.)
pub(super) fn light_prefix<'a>(snap: &Snapshot, ordered: impl IntoIterator<Item = &'a QueuedJob> + Clone) -> usize {
    let usage: FxHashMap<LabId, f64> = snap.labs.iter().map(|l| (l.lab, usage::decayed(l, snap.now_ms))).collect();
    let of = |lab: LabId| usage.get(&lab).copied().unwrap_or(0.0);
    let waiting: FxHashSet<LabId> = ordered.clone().into_iter().map(|j| j.lab).collect();
    if waiting.is_empty() {
        return 0;
    }
    let mean = waiting.iter().map(|&l| of(l)).sum::<f64>() / waiting.len() as f64;
    let mut taken: FxHashMap<LabId, u64> = FxHashMap::default();
    for b in &snap.busy_until {
        *taken.entry(b.lab).or_default() += 1;
    }
    let labs = waiting.len() + taken.keys().filter(|l| !waiting.contains(l)).count();
    let gpus = usable_gpus(snap);
    // within an equal share: n × labs ≤ gpus, in integers
    let share_fits = |n: u64| n.saturating_mul(labs as u64) <= gpus;
    ordered
        .into_iter()
        .take_while(|j| {
            let t = taken.entry(j.lab).or_default();
            *t += u64::from(j.num_gpus);
            of(j.lab) <= mean && share_fits(*t)
        })
        .count()
}

/// Brings a held or draining job's accrued cost up to now; returns the
/// slot of its reservation, if that placement can still take it.
fn accrue_hold(snap: &Snapshot, job: &mut QueuedJob, time: &Timeline<'_>) -> Option<usize> {
    let res = job.reservation.as_mut()?;
    let tflops = snap.tiers.iter().find(|t| t.name == res.tier).map_or(0.0, |t| t.tflops);
    usage::accrue(res, &mut job.accrued, tflops, snap.now_ms);
    let (node, tier) = (res.node.clone(), res.tier.clone());
    time.find(&node, &tier).filter(|&i| time.fits(i, job))
}

/// The earliest start for `job` and where: on `hold` only if set, else on
/// any fitting placement, its `own` first among equal starts, then one
/// nobody else holds GPUs on (a planned job keeps its placement while it
/// stays in the plan), then the dispatch order.
fn best_start(
    time: &Timeline<'_>,
    job: &QueuedJob,
    own: Option<usize>,
    hold: Option<usize>,
) -> Option<(Millis, usize)> {
    // by the earliest a start could be (then the dispatch order): the
    // search stops at the first placement that cannot beat the best found
    let pinned = hold.map(|i| [(time.lower_bound(i, job.num_gpus), 0, i)]);
    let candidates = match &pinned {
        Some(one) => one.as_slice(),
        None => time.bounds(job.num_gpus),
    };
    let key = |at: Millis, i: usize| (at, Some(i) != own, time.held_by_others(i), time.order_key(i));
    let mut best: Option<(Millis, usize)> = None;
    for &(bound, _, i) in candidates {
        // no start on `i` before its n-th GPU frees up; among equal bounds
        // the dispatch order holds, so an equal start on its own placement
        // or one nobody holds anything on is already the best, and so on
        // every later candidate, fitting or not (asked first, whether
        // each fits was a twentieth of a replay at 80×8)
        if let Some(b) = best {
            let settled = Some(b.1) == own || (own.is_none() && time.held_by_others(b.1) == 0);
            if bound > b.0 || (bound == b.0 && settled) {
                break;
            }
            // cannot start before the best found, bookings counted: not
            // tried (a tie could still win on the tie-breakers)
            if time.open_bound(i, job.num_gpus) > b.0 {
                continue;
            }
        }
        if !time.fits(i, job) {
            continue;
        }
        if let Some(at) = time.earliest(i, job) {
            if best.is_none_or(|b| key(at, i) < key(b.0, b.1)) {
                best = Some((at, i));
            }
        }
    }
    best
}

/// Ends the job's hold, if it has one, charging what it accrued.
fn release(plan: &mut Plan, job: &mut QueuedJob, reason: ReleaseReason) {
    if let Some(res) = job.reservation.take() {
        plan.releases.push(Release { job: job.id, node: res.node.clone(), tier: res.tier.clone(), reason });
        charge_reservation(plan, job, &res.tier);
    }
}

/// A job of the plan: the earliest start any fitting placement gives it
/// (only its own while it holds GPUs there; its own first among equal
/// starts while it drains one), dispatched if that is now, else booked,
/// and held once near.
/// Returns whether it booked a start later than now (a drain).
fn plan_start(plan: &mut Plan, time: &mut Timeline<'_>, mut job: QueuedJob, rank: u32, own: Option<usize>) -> bool {
    let now = time.now;
    let held: Vec<u32> = job.reservation.as_ref().map(|r| r.gpus.clone()).unwrap_or_default();
    // Holding GPUs keeps a job on its placement; a drain alone does not:
    // its start may be days away while another placement frees first
    // (and the lab would pay for the wait).
    let hold = own.filter(|_| !held.is_empty());
    // its hold is decided again below
    time.forget_last_holds(job.id);
    time.sort_bounds(job.num_gpus);
    let best = best_start(time, &job, own, hold);
    // the GPUs are picked only for the start chosen
    let Some((at, i, gpus)) = best.map(|(at, i)| (at, i, time.pick(i, &job, at, &held))) else {
        release(plan, &mut job, ReleaseReason::PlacementLost);
        let reason = time.never_reason(&job);
        plan.waiting.push(waiting(job, rank, reason));
        return false;
    };
    // a reservation elsewhere ends here, charged what it accrued
    if Some(i) != own {
        release(plan, &mut job, ReleaseReason::PlacementLost);
    }
    if at <= now {
        dispatch(plan, time, job, rank, i, gpus);
        return false;
    }
    time.book(i, &gpus, at, at + job.time_limit_ms.max(1), job.id);
    let slot = time.slots[i];
    // idle now and not held for an earlier job (one it will hand them to)
    let idle_now: Vec<u32> =
        gpus.iter().copied().filter(|&g| time.free_at(i, g) <= now && !time.is_held(i, g)).collect();
    let keep = if at - now <= HOLD_AHEAD_MS { idle_now } else { Vec::new() };
    let reason = PendingReason::Planned {
        node: slot.node.clone(),
        tier: slot.tier.clone(),
        start_ms: at,
        held: keep.len() as u32,
        need: job.num_gpus,
    };
    for &g in &keep {
        time.hold(i, g, job.id, at);
    }
    match (keep.is_empty(), job.reservation.as_mut()) {
        // a drain goes on on the same placement, no GPU held yet: what it
        // accrued stays with it (charged when it ends, R4)
        (true, Some(res)) if res.drained > 0 && res.node == slot.node && res.tier == slot.tier => res.gpus.clear(),
        (true, Some(_)) => release(plan, &mut job, ReleaseReason::Demoted),
        (false, Some(res)) => res.gpus = keep,
        (false, None) => {
            job.reservation = Some(Box::new(Reservation {
                node: slot.node.clone(),
                tier: slot.tier.clone(),
                gpus: keep,
                drained: 0,
                accrued_at_ms: now,
            }))
        }
        (true, None) => {}
    }
    plan.waiting.push(waiting(job, rank, reason));
    true
}

/// A job behind the plan starts now only where its limit ends before
/// every booking on the GPUs it takes.
fn backfill(plan: &mut Plan, time: &mut Timeline<'_>, job: QueuedJob, rank: u32) {
    // most jobs behind the plan find nothing: say so without a scan
    let (n, limit) = (job.num_gpus as usize, job.time_limit_ms.max(1));
    let best = if time.max_idle() < n || time.longest_window() < limit {
        None
    } else {
        // the seed's dispatch order: best tier, fewest idle that suffice,
        // node; `by_order` is by tier then node, so the first tier with a
        // fit ends the search
        let mut found: Option<usize> = None;
        for &i in &time.by_order {
            if let Some(f) = found {
                if time.order_key(i).0 != time.order_key(f).0 {
                    break;
                }
            }
            let fits = time.idle_count(i) >= n && time.fits(i, &job) && time.has_usable(i, &job, time.now, n);
            if fits && found.is_none_or(|f| time.idle_count(i) < time.idle_count(f)) {
                found = Some(i);
            }
        }
        found.and_then(|i| time.start_now(i, &job).map(|gpus| (i, gpus)))
    };
    match best {
        Some((i, gpus)) => dispatch(plan, time, job, rank, i, gpus),
        None => {
            let reason =
                if time.could_fit_now(&job) { PendingReason::WaitingForHigherRank } else { time.never_reason(&job) };
            plan.waiting.push(waiting(job, rank, reason));
        }
    }
}

fn dispatch(plan: &mut Plan, time: &mut Timeline<'_>, mut job: QueuedJob, rank: u32, i: usize, gpus: Vec<u32>) {
    let slot = time.slots[i];
    let swapped_from = match job.reservation.take() {
        Some(res) if res.node != slot.node || res.tier != slot.tier => Some((res.node, res.tier)),
        _ => None,
    };
    time.run(i, &gpus, time.now + job.time_limit_ms.max(1));
    plan.dispatches.push(Dispatch {
        job: job.id,
        rank,
        node: slot.node.clone(),
        tier: slot.tier.clone(),
        reclaim_backfill: gpus.iter().copied().filter(|g| slot.backfill.contains(g)).collect(),
        gpus,
        accrued: job.accrued,
        swapped_from,
    });
}
