//! The `planned` policy (§11): the seed's order, slots, charging and
//! maintenance, with a start plan instead of the single rank-1
//! reservation.
//!
//! Each cycle the first `depth` jobs of the order (jobs waiting past
//! `max_wait` first, oldest first; then fair share) get, in turn, the
//! earliest start any fitting placement can give them — running jobs end
//! at their time limits, and each plan books its GPUs from its start for
//! its own limit. A job whose start is now is dispatched. GPUs idle now
//! and booked by a plan starting within [`HOLD_AHEAD_MS`] are held for it
//! (charged lazily, §5). A planned job keeps its placement while it stays
//! among the first `depth`. Every other job starts now only where its own
//! limit ends before every booking on the GPUs it would take (backfill):
//! the plan is never delayed by a job behind it.

use std::collections::HashMap;

use app::model::MaintenancePhase;

use super::cycle::{advance_maintenance, charge_reservation, fair_share_order, promote, waiting};
use super::model::*;
use super::placements::tier_fits;
use super::usage;

/// Idle GPUs are held for a planned job once its start is this near:
/// earlier, holding them would only show an idle GPU as taken (backfill
/// may use it anyway, up to the planned start).
pub const HOLD_AHEAD_MS: Millis = 10 * 60_000;

/// A GPU whose end is unknown (a dispatch without a limit) is assumed busy
/// this long.
const UNKNOWN_END_MS: Millis = 24 * 3_600_000;

pub(super) fn decide(snap: &Snapshot, depth: usize, max_wait_ms: Millis) -> Plan {
    let mut plan = Plan::default();
    let dispatching = advance_maintenance(snap, &mut plan) == MaintenancePhase::Normal;
    let mut queue: Vec<QueuedJob> = snap.queue.clone();
    promote(snap, &mut plan, &mut queue);
    let queue = overdue_first(fair_share_order(snap, queue), snap.now_ms, max_wait_ms);
    let mut time = Timeline::new(snap);
    for (pos, mut job) in queue.into_iter().enumerate() {
        let rank = pos as u32 + 1;
        let hold = accrue_hold(snap, &mut job, &time);
        if !dispatching {
            release(&mut plan, &mut job, ReleaseReason::Maintenance);
            plan.waiting.push(waiting(job, rank, PendingReason::Maintenance));
        } else if pos < depth {
            plan_start(&mut plan, &mut time, job, rank, hold);
        } else {
            release(&mut plan, &mut job, ReleaseReason::Demoted);
            backfill(&mut plan, &mut time, job, rank);
        }
    }
    plan
}

/// Jobs that waited `max_wait_ms` or longer go first, oldest first; the
/// rest keep the fair-share order.
fn overdue_first(queue: Vec<QueuedJob>, now: Millis, max_wait_ms: Millis) -> Vec<QueuedJob> {
    let (mut overdue, rest): (Vec<QueuedJob>, Vec<QueuedJob>) =
        queue.into_iter().partition(|j| now - j.queue_entered_at_ms >= max_wait_ms);
    overdue.sort_by_key(|j| (j.queue_entered_at_ms, j.id));
    overdue.extend(rest);
    overdue
}

/// Brings a held job's accrued cost up to now; returns the slot it holds
/// GPUs on, if that placement can still take it.
fn accrue_hold(snap: &Snapshot, job: &mut QueuedJob, time: &Timeline<'_>) -> Option<usize> {
    let res = job.reservation.as_mut()?;
    let tflops = snap.tiers.iter().find(|t| t.name == res.tier).map_or(0.0, |t| t.tflops);
    usage::accrue(res, &mut job.accrued, tflops, snap.now_ms);
    let (node, tier) = (res.node.clone(), res.tier.clone());
    time.find(&node, &tier).filter(|&i| time.fits(i, job))
}

/// Ends the job's hold, if it has one, charging what it accrued.
fn release(plan: &mut Plan, job: &mut QueuedJob, reason: ReleaseReason) {
    if let Some(res) = job.reservation.take() {
        plan.releases.push(Release { job: job.id, node: res.node.clone(), tier: res.tier.clone(), reason });
        charge_reservation(plan, job, &res.tier);
    }
}

/// A job of the plan: the earliest start any fitting placement gives it
/// (only its own while it holds GPUs there), dispatched if that is now,
/// else booked, and held once near.
fn plan_start(plan: &mut Plan, time: &mut Timeline<'_>, mut job: QueuedJob, rank: u32, hold: Option<usize>) {
    let now = time.now;
    let held: Vec<u32> = job.reservation.as_ref().map(|r| r.gpus.clone()).unwrap_or_default();
    // its hold is decided again below
    time.held_before.retain(|_, holder| *holder != job.id);
    // by the earliest a start could be (then the dispatch order): the
    // search stops at the first placement that cannot beat the best found
    let mut candidates: Vec<(Millis, usize)> = match hold {
        Some(i) => vec![(time.lower_bound(i, job.num_gpus), i)],
        None => time
            .by_order
            .iter()
            .copied()
            .filter(|&i| time.fits(i, &job))
            .map(|i| (time.lower_bound(i, job.num_gpus), i))
            .collect(),
    };
    candidates.sort_by_key(|&(bound, _)| bound);
    // among equally early starts, the placement nobody else holds GPUs on:
    // a planned job keeps its placement while it stays in the plan
    let key = |at: Millis, i: usize| (at, time.held_by_others(i), time.order_key(i));
    let mut best: Option<(Millis, usize, Vec<u32>)> = None;
    for (bound, i) in candidates {
        // no start on `i` before its n-th GPU frees up; among equal bounds
        // the dispatch order holds (a stable sort), so an equal start on a
        // placement nobody holds anything on is already the best
        if let Some(b) = &best {
            if bound > b.0 {
                break;
            }
            if bound == b.0 && time.held_by_others(b.1) == 0 {
                continue;
            }
        }
        if let Some((at, gpus)) = time.earliest(i, &job, &held) {
            if best.as_ref().is_none_or(|b| key(at, i) < key(b.0, b.1)) {
                best = Some((at, i, gpus));
            }
        }
    }
    let Some((at, i, gpus)) = best else {
        release(plan, &mut job, ReleaseReason::PlacementLost);
        let reason = time.never_reason(&job);
        plan.waiting.push(waiting(job, rank, reason));
        return;
    };
    if hold.is_none() {
        release(plan, &mut job, ReleaseReason::PlacementLost);
    }
    if at <= now {
        dispatch(plan, time, job, rank, i, gpus);
        return;
    }
    time.book(i, &gpus, at, at + job.time_limit_ms.max(1));
    let slot = time.slots[i];
    // idle now and not held for an earlier job (one it will hand them to)
    let idle_now: Vec<u32> =
        gpus.iter().copied().filter(|&g| time.free_at(i, g) <= now && !time.held_by.contains_key(&(i, g))).collect();
    let keep = if at - now <= HOLD_AHEAD_MS { idle_now } else { Vec::new() };
    let reason = PendingReason::Planned {
        node: slot.node.clone(),
        tier: slot.tier.clone(),
        start_ms: at,
        held: keep.len() as u32,
        need: job.num_gpus,
    };
    for &g in &keep {
        time.held_by.insert((i, g), (job.id, at));
    }
    time.window_cache = None;
    match (keep.is_empty(), job.reservation.as_mut()) {
        (true, Some(_)) => release(plan, &mut job, ReleaseReason::Demoted),
        (false, Some(res)) => res.gpus = keep,
        (false, None) => {
            job.reservation =
                Some(Reservation { node: slot.node.clone(), tier: slot.tier.clone(), gpus: keep, accrued_at_ms: now })
        }
        (true, None) => {}
    }
    plan.waiting.push(waiting(job, rank, reason));
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
            let fits = time.idle_count(i) >= n && time.fits(i, &job) && time.count_usable(i, &job, time.now) >= n;
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

/// When each GPU of each placement is free, and what the plan booked.
struct Timeline<'a> {
    now: Millis,
    slots: Vec<&'a PlacementState>,
    tiers: Vec<&'a TierInfo>,
    /// Per slot: (gpu, free from).
    gpus: Vec<Vec<(u32, Millis)>>,
    /// Per slot: (gpu, from, to) of planned starts.
    bookings: Vec<Vec<(u32, Millis, Millis)>>,
    /// Per slot: GPUs free when the cycle began (for the waiting reason).
    initial_free: Vec<usize>,
    /// Per slot: GPUs idle now (free and not started on this cycle).
    idle: Vec<usize>,
    max_idle: usize,
    /// [`Timeline::longest_window`], until a booking or start changes it.
    window_cache: Option<Millis>,
    /// GPUs held this cycle for a planned job, and its start: no job
    /// behind it may use them before that start.
    held_by: HashMap<(usize, u32), (JobId, Millis)>,
    /// Holds of the last cycle not decided again yet: an earlier job avoids
    /// them where it can (a planned job keeps its placement).
    held_before: HashMap<(usize, u32), JobId>,
    by_key: HashMap<(&'a str, &'a str), usize>,
    /// Slots in the dispatch order (best tier, then node).
    by_order: Vec<usize>,
}

impl<'a> Timeline<'a> {
    fn new(snap: &'a Snapshot) -> Self {
        let tier_of: HashMap<&str, &TierInfo> = snap.tiers.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut slots: Vec<&PlacementState> =
            snap.placements.iter().filter(|p| tier_of.contains_key(p.tier.as_str())).collect();
        slots.sort_by(|a, b| (a.node.as_str(), a.tier.as_str()).cmp(&(b.node.as_str(), b.tier.as_str())));
        let mut ends: HashMap<(&str, &str), Vec<(u32, Millis)>> = HashMap::new();
        for b in &snap.busy_until {
            ends.entry((b.node.as_str(), b.tier.as_str())).or_default().push((b.gpu, b.until_ms.max(snap.now_ms)));
        }
        let gpus: Vec<Vec<(u32, Millis)>> = slots
            .iter()
            .map(|p| {
                let mut gpus: Vec<(u32, Millis)> = p.free.iter().map(|&g| (g, snap.now_ms)).collect();
                for &(g, until) in ends.get(&(p.node.as_str(), p.tier.as_str())).into_iter().flatten() {
                    if !p.free.contains(&g) {
                        gpus.push((g, until));
                    }
                }
                // busy GPUs whose end is unknown
                let mut next = 0u32;
                while (gpus.len() as u32) < p.capacity {
                    while gpus.iter().any(|&(g, _)| g == next) {
                        next += 1;
                    }
                    gpus.push((next, snap.now_ms + UNKNOWN_END_MS));
                }
                gpus.sort_unstable();
                gpus
            })
            .collect();
        let by_key: HashMap<(&str, &str), usize> =
            slots.iter().enumerate().map(|(i, p)| ((p.node.as_str(), p.tier.as_str()), i)).collect();
        let mut held_before = HashMap::new();
        for j in &snap.queue {
            if let Some(r) = &j.reservation {
                if let Some(&i) = by_key.get(&(r.node.as_str(), r.tier.as_str())) {
                    held_before.extend(r.gpus.iter().map(|&g| ((i, g), j.id)));
                }
            }
        }
        let idle: Vec<usize> = gpus.iter().map(|g| g.iter().filter(|&&(_, at)| at <= snap.now_ms).count()).collect();
        let mut by_order: Vec<usize> = (0..slots.len()).collect();
        by_order.sort_by(|&a, &b| {
            (-tier_of[slots[a].tier.as_str()].sort_order, slots[a].node.as_str())
                .cmp(&(-tier_of[slots[b].tier.as_str()].sort_order, slots[b].node.as_str()))
        });
        Timeline {
            by_order,
            now: snap.now_ms,
            max_idle: max_idle(slots.iter().map(|p| p.usable).zip(&idle)),
            window_cache: None,
            idle,
            held_by: HashMap::new(),
            held_before,
            tiers: slots.iter().map(|p| tier_of[p.tier.as_str()]).collect(),
            initial_free: slots.iter().map(|p| if p.usable { p.free.len() } else { 0 }).collect(),
            by_key,
            bookings: vec![Vec::new(); slots.len()],
            slots,
            gpus,
        }
    }

    fn find(&self, node: &str, tier: &str) -> Option<usize> {
        self.by_key.get(&(node, tier)).copied()
    }

    fn fits(&self, i: usize, job: &QueuedJob) -> bool {
        self.slots[i].usable && job.num_gpus <= self.slots[i].capacity && tier_fits(self.tiers[i], job)
    }

    /// The dispatch order among placements: best tier first, then node.
    fn order_key(&self, i: usize) -> (i64, &str) {
        (-self.tiers[i].sort_order, self.slots[i].node.as_str())
    }

    fn free_at(&self, i: usize, gpu: u32) -> Millis {
        self.gpus[i].iter().find(|&&(g, _)| g == gpu).map_or(Millis::MAX, |&(_, at)| at)
    }

    fn idle_count(&self, i: usize) -> usize {
        self.idle[i]
    }

    /// The most GPUs idle now on one usable placement.
    fn max_idle(&self) -> usize {
        self.max_idle
    }

    /// No start on slot `i` for `n` GPUs before its n-th GPU is free.
    fn lower_bound(&self, i: usize, n: u32) -> Millis {
        let nth = if n <= 1 {
            self.gpus[i].iter().map(|&(_, at)| at).min()
        } else {
            let mut free: Vec<Millis> = self.gpus[i].iter().map(|&(_, at)| at).collect();
            free.sort_unstable();
            free.get(n as usize - 1).copied()
        };
        nth.unwrap_or(Millis::MAX).max(self.now)
    }

    fn booked(&self, i: usize, gpu: u32, from: Millis, to: Millis) -> bool {
        self.bookings[i].iter().any(|&(g, a, b)| g == gpu && a < to && from < b)
    }

    /// How many GPUs of slot `i` are free over `[at, at + limit)`.
    fn count_usable(&self, i: usize, job: &QueuedJob, at: Millis) -> usize {
        let to = at + job.time_limit_ms.max(1);
        self.gpus[i]
            .iter()
            .filter(|&&(g, free)| free <= at && !self.booked(i, g, at, to))
            .filter(|&&(g, _)| self.held_by.get(&(i, g)).is_none_or(|&(holder, start)| holder == job.id || at >= start))
            .count()
    }

    /// GPUs of slot `i` free over `[at, at + limit)`, `prefer`red first.
    fn usable_at(&self, i: usize, job: &QueuedJob, at: Millis, prefer: &[u32]) -> Vec<u32> {
        let to = at + job.time_limit_ms.max(1);
        let mut ok: Vec<u32> = self.gpus[i]
            .iter()
            .filter(|&&(g, free)| free <= at && !self.booked(i, g, at, to))
            .filter(|&&(g, _)| self.held_by.get(&(i, g)).is_none_or(|&(holder, start)| holder == job.id || at >= start))
            .map(|&(g, _)| g)
            .collect();
        ok.sort_by_key(|g| (!prefer.contains(g), self.slots[i].backfill.contains(g), *g));
        ok
    }

    /// The earliest start slot `i` can give `job`, and on which GPUs.
    fn earliest(&self, i: usize, job: &QueuedJob, prefer: &[u32]) -> Option<(Millis, Vec<u32>)> {
        let n = job.num_gpus as usize;
        if self.gpus[i].len() < n {
            return None;
        }
        let mut times: Vec<Millis> = std::iter::once(self.now)
            .chain(self.gpus[i].iter().map(|&(_, at)| at))
            .chain(self.bookings[i].iter().map(|&(_, _, to)| to))
            .filter(|&t| t >= self.now)
            .collect();
        times.sort_unstable();
        times.dedup();
        times.into_iter().find_map(|at| {
            let ok = self.usable_at(i, job, at, prefer);
            (ok.len() >= n).then(|| (at, ok[..n].to_vec()))
        })
    }

    /// GPUs of slot `i` held (this cycle or the last) for other jobs.
    fn held_by_others(&self, i: usize) -> usize {
        self.held_by.keys().chain(self.held_before.keys()).filter(|&&(s, _)| s == i).count()
    }

    /// GPUs to start `job` on slot `i` now without touching a booking or
    /// a GPU held for a planned job.
    fn start_now(&self, i: usize, job: &QueuedJob) -> Option<Vec<u32>> {
        let ok = self.usable_at(i, job, self.now, &[]);
        (ok.len() >= job.num_gpus as usize).then(|| ok[..job.num_gpus as usize].to_vec())
    }

    fn book(&mut self, i: usize, gpus: &[u32], from: Millis, to: Millis) {
        self.bookings[i].extend(gpus.iter().map(|&g| (g, from, to)));
        self.window_cache = None;
    }

    /// The longest any idle GPU stays free of bookings and holds from now
    /// (`Millis::MAX` if some never needs to): no job with a longer limit
    /// can start anywhere now.
    fn longest_window(&mut self) -> Millis {
        if let Some(w) = self.window_cache {
            return w;
        }
        let mut longest = 0;
        for i in 0..self.slots.len() {
            if !self.slots[i].usable {
                continue;
            }
            for &(g, free) in &self.gpus[i] {
                if free > self.now {
                    continue;
                }
                let booked =
                    self.bookings[i].iter().filter(|&&(b, _, to)| b == g && to > self.now).map(|&(_, from, _)| from);
                let held = self.held_by.get(&(i, g)).map(|&(_, start)| start);
                let until = booked.chain(held).min().map_or(Millis::MAX, |t| t - self.now);
                longest = longest.max(until);
            }
        }
        self.window_cache = Some(longest);
        longest
    }

    /// The GPUs run a job until `until`.
    fn run(&mut self, i: usize, gpus: &[u32], until: Millis) {
        for (g, at) in self.gpus[i].iter_mut() {
            if gpus.contains(g) {
                *at = until;
            }
        }
        self.idle[i] = self.gpus[i].iter().filter(|&&(_, at)| at <= self.now).count();
        self.window_cache = None;
        self.max_idle = max_idle(self.slots.iter().map(|p| p.usable).zip(&self.idle));
    }

    fn could_fit_now(&self, job: &QueuedJob) -> bool {
        (0..self.slots.len()).any(|i| self.fits(i, job) && self.initial_free[i] >= job.num_gpus as usize)
    }

    /// Why a job no placement can take now waits.
    fn never_reason(&self, job: &QueuedJob) -> PendingReason {
        if job.min_vram_gb > 0 {
            PendingReason::NoIdleLargeGpu { min_vram_gb: job.min_vram_gb }
        } else {
            PendingReason::NoIdleGpu
        }
    }
}

fn max_idle<'b>(slots: impl Iterator<Item = (bool, &'b usize)>) -> usize {
    slots.filter(|(usable, _)| *usable).map(|(_, &idle)| idle).max().unwrap_or(0)
}
