//! The planned policy's view of time (§11): when each GPU of each
//! placement is free, what the plans of earlier jobs booked, and which
//! idle GPUs are held for whom — with the searches the policy asks of it
//! (the earliest start a placement can give, a start now that touches no
//! booking or hold).

use std::collections::HashMap;

use super::model::*;
use super::placements::tier_fits;

/// A GPU whose end is unknown (a dispatch without a limit) is assumed busy
/// this long.
const UNKNOWN_END_MS: Millis = 24 * 3_600_000;

/// When each GPU of each placement is free, and what the plan booked.
pub(super) struct Timeline<'a> {
    pub(super) now: Millis,
    pub(super) slots: Vec<&'a PlacementState>,
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
    pub(super) window_cache: Option<Millis>,
    /// GPUs held this cycle for a planned job, and its start: no job
    /// behind it may use them before that start.
    pub(super) held_by: HashMap<(usize, u32), (JobId, Millis)>,
    /// Holds of the last cycle not decided again yet: an earlier job avoids
    /// them where it can (a planned job keeps its placement).
    pub(super) held_before: HashMap<(usize, u32), JobId>,
    by_key: HashMap<(&'a str, &'a str), usize>,
    /// Slots in the dispatch order (best tier, then node).
    pub(super) by_order: Vec<usize>,
}

impl<'a> Timeline<'a> {
    pub(super) fn new(snap: &'a Snapshot) -> Self {
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

    pub(super) fn find(&self, node: &str, tier: &str) -> Option<usize> {
        self.by_key.get(&(node, tier)).copied()
    }

    pub(super) fn fits(&self, i: usize, job: &QueuedJob) -> bool {
        self.slots[i].usable && job.num_gpus <= self.slots[i].capacity && tier_fits(self.tiers[i], job)
    }

    /// The dispatch order among placements: best tier first, then node.
    pub(super) fn order_key(&self, i: usize) -> (i64, &str) {
        (-self.tiers[i].sort_order, self.slots[i].node.as_str())
    }

    pub(super) fn free_at(&self, i: usize, gpu: u32) -> Millis {
        self.gpus[i].iter().find(|&&(g, _)| g == gpu).map_or(Millis::MAX, |&(_, at)| at)
    }

    pub(super) fn idle_count(&self, i: usize) -> usize {
        self.idle[i]
    }

    /// The most GPUs idle now on one usable placement.
    pub(super) fn max_idle(&self) -> usize {
        self.max_idle
    }

    /// No start on slot `i` for `n` GPUs before its n-th GPU is free.
    pub(super) fn lower_bound(&self, i: usize, n: u32) -> Millis {
        let gpus = &self.gpus[i];
        let n = n as usize;
        let nth = if n <= 1 {
            gpus.iter().map(|&(_, at)| at).min()
        } else if n > gpus.len() {
            None
        } else if gpus.len() <= 32 {
            // on the stack: this runs for every placement of every planned job
            let mut free = [0; 32];
            for (slot, &(_, at)) in free.iter_mut().zip(gpus) {
                *slot = at;
            }
            Some(*free[..gpus.len()].select_nth_unstable(n - 1).1)
        } else {
            let mut free: Vec<Millis> = gpus.iter().map(|&(_, at)| at).collect();
            Some(*free.select_nth_unstable(n - 1).1)
        };
        nth.unwrap_or(Millis::MAX).max(self.now)
    }

    pub(super) fn booked(&self, i: usize, gpu: u32, from: Millis, to: Millis) -> bool {
        self.bookings[i].iter().any(|&(g, a, b)| g == gpu && a < to && from < b)
    }

    /// Whether `n` GPUs of slot `i` are free over `[at, at + limit)`
    /// (the hottest question of a planned cycle: it stops at the n-th).
    pub(super) fn has_usable(&self, i: usize, job: &QueuedJob, at: Millis, n: usize) -> bool {
        let to = at + job.time_limit_ms.max(1);
        let holds = !self.held_by.is_empty();
        let mut found = 0;
        for &(g, free) in &self.gpus[i] {
            if free > at || self.booked(i, g, at, to) {
                continue;
            }
            if holds && self.held_by.get(&(i, g)).is_some_and(|&(holder, start)| holder != job.id && at < start) {
                continue;
            }
            found += 1;
            if found >= n {
                return true;
            }
        }
        false
    }

    /// GPUs of slot `i` free over `[at, at + limit)`, `prefer`red first.
    pub(super) fn usable_at(&self, i: usize, job: &QueuedJob, at: Millis, prefer: &[u32]) -> Vec<u32> {
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
    pub(super) fn earliest(&self, i: usize, job: &QueuedJob, prefer: &[u32]) -> Option<(Millis, Vec<u32>)> {
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
        // counted first; the GPUs are picked only for the start found
        let at = times.into_iter().find(|&at| self.has_usable(i, job, at, n))?;
        let ok = self.usable_at(i, job, at, prefer);
        Some((at, ok[..n].to_vec()))
    }

    /// GPUs of slot `i` held (this cycle or the last) for other jobs.
    pub(super) fn held_by_others(&self, i: usize) -> usize {
        self.held_by.keys().chain(self.held_before.keys()).filter(|&&(s, _)| s == i).count()
    }

    /// GPUs to start `job` on slot `i` now without touching a booking or
    /// a GPU held for a planned job.
    pub(super) fn start_now(&self, i: usize, job: &QueuedJob) -> Option<Vec<u32>> {
        let ok = self.usable_at(i, job, self.now, &[]);
        (ok.len() >= job.num_gpus as usize).then(|| ok[..job.num_gpus as usize].to_vec())
    }

    pub(super) fn book(&mut self, i: usize, gpus: &[u32], from: Millis, to: Millis) {
        self.bookings[i].extend(gpus.iter().map(|&g| (g, from, to)));
        self.window_cache = None;
    }

    /// The longest any idle GPU stays free of bookings and holds from now
    /// (`Millis::MAX` if some never needs to): no job with a longer limit
    /// can start anywhere now.
    pub(super) fn longest_window(&mut self) -> Millis {
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
    pub(super) fn run(&mut self, i: usize, gpus: &[u32], until: Millis) {
        for (g, at) in self.gpus[i].iter_mut() {
            if gpus.contains(g) {
                *at = until;
            }
        }
        self.idle[i] = self.gpus[i].iter().filter(|&&(_, at)| at <= self.now).count();
        self.window_cache = None;
        self.max_idle = max_idle(self.slots.iter().map(|p| p.usable).zip(&self.idle));
    }

    pub(super) fn could_fit_now(&self, job: &QueuedJob) -> bool {
        (0..self.slots.len()).any(|i| self.fits(i, job) && self.initial_free[i] >= job.num_gpus as usize)
    }

    /// Why a job no placement can take now waits.
    pub(super) fn never_reason(&self, job: &QueuedJob) -> PendingReason {
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
