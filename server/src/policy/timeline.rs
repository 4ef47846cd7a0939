//! The planned policy's view of time (§11): when each GPU of each
//! placement is free, what the plans of earlier jobs booked, and which
//! idle GPUs are held for whom — with the searches the policy asks of it
//! (the earliest start a placement can give, a start now that touches no
//! booking or hold).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::model::*;
use super::placements::tier_fits;

/// Idle GPUs are held for a planned job once its start is this near:
/// earlier, holding them would only show an idle GPU as taken (backfill
/// may use it anyway, up to the planned start).
pub const HOLD_AHEAD_MS: Millis = 10 * 60_000;

/// A GPU whose end is unknown (a dispatch without a limit) is assumed busy
/// this long.
const UNKNOWN_END_MS: Millis = 24 * 3_600_000;

/// When each GPU of each placement is free, and what the plan booked.
pub(super) struct Timeline<'a> {
    pub(super) now: Millis,
    pub(super) slots: Vec<&'a PlacementState>,
    tiers: Vec<&'a TierInfo>,
    /// Per slot: (gpu, free from), by GPU.
    gpus: Vec<Vec<(u32, Millis)>>,
    /// Per slot: the free-from times in order (the n-th is a start's
    /// lower bound, asked for every placement of every planned job).
    free_sorted: Vec<Vec<Millis>>,
    /// Per slot, per GPU (as in `gpus`): (from, to, for whom) that planned
    /// starts keep other jobs off, by `from`; never overlapping. `from` is
    /// [`HOLD_AHEAD_MS`] before the start: the GPU will be held then, and a
    /// plan that let a job run into the hold would not be kept.
    bookings: Vec<Vec<Vec<(Millis, Millis, JobId)>>>,
    /// Per slot: GPUs free when the cycle began (for the waiting reason).
    initial_free: Vec<usize>,
    /// [`Timeline::could_fit_now`] by (GPUs, minimum VRAM): asked for
    /// every job the plan leaves waiting, thousands a cycle under
    /// overload, and a scan of every placement each time was a tenth of
    /// a planned replay at 48×8.
    fit_now: FxHashMap<(u32, u32), bool>,
    /// Per slot: GPUs idle now (free and not started on this cycle).
    idle: Vec<usize>,
    max_idle: usize,
    /// [`Timeline::longest_window`], until a booking, hold or start changes it.
    window_cache: Option<Millis>,
    /// Per slot, per GPU (as in `gpus`): held this cycle for a planned
    /// job until its start; no job behind it may use the GPU before.
    held_by: Vec<Vec<Option<(JobId, Millis)>>>,
    any_held: bool,
    /// Holds of the last cycle not decided again yet, by job (the slot of
    /// each GPU): an earlier job avoids them where it can (a planned job
    /// keeps its placement).
    held_before: FxHashMap<JobId, Vec<usize>>,
    /// Per slot: GPUs held this cycle or the last (not decided again),
    /// counted as they change (asked for every candidate placement).
    holds_on: Vec<usize>,
    by_key: FxHashMap<(&'a str, &'a str), usize>,
    /// Slots in the dispatch order (best tier, then node).
    pub(super) by_order: Vec<usize>,
    /// Per GPU count `n` (index `n`): every slot by when its `n`-th GPU
    /// frees up, then the dispatch order — (bound, position, slot) — until
    /// a start changes a free time. Bookings and holds leave it as it is,
    /// so the planned jobs of a cycle share it instead of each sorting the
    /// placements (a heap per job was a quarter of a planned replay).
    by_bound: Vec<Option<Vec<(Millis, usize, usize)>>>,
}

impl<'a> Timeline<'a> {
    pub(super) fn new(snap: &'a Snapshot) -> Self {
        let tier_of: FxHashMap<&str, &TierInfo> = snap.tiers.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut slots: Vec<&PlacementState> =
            snap.placements.iter().filter(|p| tier_of.contains_key(p.tier.as_str())).collect();
        slots.sort_by(|a, b| (a.node.as_str(), a.tier.as_str()).cmp(&(b.node.as_str(), b.tier.as_str())));
        let predicted = snap.mode.predicts_ends();
        let mut ends: FxHashMap<(&str, &str), Vec<(u32, Millis)>> = FxHashMap::default();
        // a placement's GPUs come in runs sharing its names: one look-up a
        // run, not one a GPU (hashing names per GPU was a tenth of a cycle)
        let same_place = |a: &BusyGpu, b: &BusyGpu| Arc::ptr_eq(&a.node, &b.node) && Arc::ptr_eq(&a.tier, &b.tier);
        for run in snap.busy_until.chunk_by(same_place) {
            let gpus = ends.entry((&*run[0].node, &*run[0].tier)).or_default();
            for b in run {
                let end = if predicted { b.predicted_ms } else { b.until_ms };
                // a busy GPU is not free now even if its job is past its
                // limit or cancelled: it frees when the job is seen to end
                gpus.push((b.gpu, end.max(snap.now_ms + 1)));
            }
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
                // a GPU busy for two jobs (a cancelled one still ending, and
                // the next) is free only when the later ends: never started
                // twice, and counted once below
                gpus.sort_unstable();
                gpus.dedup_by(|later, earlier| {
                    let same = later.0 == earlier.0;
                    if same {
                        earlier.1 = earlier.1.max(later.1);
                    }
                    same
                });
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
        let by_key: FxHashMap<(&str, &str), usize> =
            slots.iter().enumerate().map(|(i, p)| ((p.node.as_str(), p.tier.as_str()), i)).collect();
        let mut held_before: FxHashMap<JobId, Vec<usize>> = FxHashMap::default();
        let mut holds_on = vec![0; slots.len()];
        for j in &snap.queue {
            if let Some(r) = &j.reservation {
                if let Some(&i) = by_key.get(&(r.node.as_str(), r.tier.as_str())) {
                    // drained GPUs too: a job that can start as early
                    // elsewhere leaves a drain that is filling alone
                    let n = r.charged_gpus() as usize;
                    held_before.entry(j.id).or_default().extend(std::iter::repeat_n(i, n));
                    holds_on[i] += n;
                }
            }
        }
        let idle: Vec<usize> = gpus.iter().map(|g| g.iter().filter(|&&(_, at)| at <= snap.now_ms).count()).collect();
        // best tier, then node: `slots` is in node order already, so its
        // positions stand for the names (no string compared per pair)
        let order_of: Vec<i64> = slots.iter().map(|p| -tier_of[p.tier.as_str()].sort_order).collect();
        let mut by_order: Vec<usize> = (0..slots.len()).collect();
        by_order.sort_by_key(|&i| (order_of[i], i));
        Timeline {
            free_sorted: gpus.iter().map(|g| sorted_free(g)).collect(),
            bookings: gpus.iter().map(|g| vec![Vec::new(); g.len()]).collect(),
            by_order,
            now: snap.now_ms,
            max_idle: max_idle(slots.iter().map(|p| p.usable).zip(&idle)),
            window_cache: None,
            idle,
            held_by: gpus.iter().map(|g| vec![None; g.len()]).collect(),
            any_held: false,
            held_before,
            holds_on,
            tiers: slots.iter().map(|p| tier_of[p.tier.as_str()]).collect(),
            initial_free: slots.iter().map(|p| if p.usable { p.free.len() } else { 0 }).collect(),
            fit_now: FxHashMap::default(),
            by_key,
            by_bound: Vec::new(),
            slots,
            gpus,
        }
    }

    /// Fills [`Timeline::bounds`] for `n` GPUs.
    pub(super) fn sort_bounds(&mut self, n: u32) {
        let n = n as usize;
        // no placement has that many GPUs: nothing to sort (and a GPU
        // count from a bad row sizes nothing)
        if n > self.gpus.iter().map(Vec::len).max().unwrap_or(0) {
            return;
        }
        if self.by_bound.len() <= n {
            self.by_bound.resize(n + 1, None);
        }
        if self.by_bound[n].is_none() {
            let mut sorted: Vec<(Millis, usize, usize)> =
                self.by_order.iter().enumerate().map(|(pos, &i)| (self.lower_bound(i, n as u32), pos, i)).collect();
            sorted.sort_unstable();
            self.by_bound[n] = Some(sorted);
        }
    }

    /// Every slot as (the earliest an `n`-GPU start could be there, its
    /// dispatch position, slot), earliest first ([`Timeline::sort_bounds`]
    /// first).
    pub(super) fn bounds(&self, n: u32) -> &[(Millis, usize, usize)] {
        self.by_bound.get(n as usize).and_then(Option::as_deref).unwrap_or_default()
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
        self.position(i, gpu).map_or(Millis::MAX, |p| self.gpus[i][p].1)
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
        let nth = match n as usize {
            0 => Some(self.now),
            n => self.free_sorted[i].get(n - 1).copied(),
        };
        nth.unwrap_or(Millis::MAX).max(self.now)
    }

    fn position(&self, i: usize, gpu: u32) -> Option<usize> {
        self.gpus[i].binary_search_by_key(&gpu, |&(g, _)| g).ok()
    }

    fn booked_at(&self, i: usize, pos: usize, from: Millis, to: Millis) -> bool {
        self.bookings[i][pos].iter().any(|&(a, b, _)| a < to && from < b)
    }

    /// Held this cycle for another job whose start is after `at`.
    fn held_against(&self, i: usize, pos: usize, job: JobId, at: Millis) -> bool {
        self.any_held && self.held_by[i][pos].is_some_and(|(holder, start)| holder != job && at < start)
    }

    /// Whether GPU `pos` of slot `i` can run `job` over `[at, to)`: free
    /// by then, no booking in the way, not held for another job.
    fn usable(&self, i: usize, pos: usize, job: &QueuedJob, at: Millis, to: Millis) -> bool {
        self.gpus[i][pos].1 <= at && !self.booked_at(i, pos, at, to) && !self.held_against(i, pos, job.id, at)
    }

    /// Whether the GPU is held this cycle (for a job decided before).
    pub(super) fn is_held(&self, i: usize, gpu: u32) -> bool {
        self.position(i, gpu).is_some_and(|p| self.held_by[i][p].is_some())
    }

    /// Holds the GPU for `job`, planned to start at `start`.
    pub(super) fn hold(&mut self, i: usize, gpu: u32, job: JobId, start: Millis) {
        if let Some(p) = self.position(i, gpu) {
            if self.held_by[i][p].replace((job, start)).is_none() {
                self.holds_on[i] += 1;
            }
            self.any_held = true;
            self.window_cache = None;
        }
    }

    /// The job's holds of the last cycle are being decided again.
    pub(super) fn forget_last_holds(&mut self, job: JobId) {
        for i in self.held_before.remove(&job).unwrap_or_default() {
            self.holds_on[i] -= 1;
        }
    }

    /// Whether `n` GPUs of slot `i` are free over `[at, at + limit)`
    /// (it stops at the n-th).
    pub(super) fn has_usable(&self, i: usize, job: &QueuedJob, at: Millis, n: usize) -> bool {
        let to = at + job.time_limit_ms.max(1);
        (0..self.gpus[i].len()).filter(|&p| self.usable(i, p, job, at, to)).nth(n.saturating_sub(1)).is_some()
    }

    /// GPUs of slot `i` free over `[at, at + limit)`, `prefer`red first.
    pub(super) fn usable_at(&self, i: usize, job: &QueuedJob, at: Millis, prefer: &[u32]) -> Vec<u32> {
        let to = at + job.time_limit_ms.max(1);
        let mut ok: Vec<u32> =
            (0..self.gpus[i].len()).filter(|&p| self.usable(i, p, job, at, to)).map(|p| self.gpus[i][p].0).collect();
        ok.sort_by_key(|g| (!prefer.contains(g), self.slots[i].backfill.contains(g), *g));
        ok
    }

    /// The earliest start slot `i` can give `job` (see [`Timeline::pick`]
    /// for the GPUs).
    ///
    /// Each GPU can start the job inside a few windows (from when it is
    /// free and no other job's hold stops it, up to the last start that
    /// still ends before its next booking; open after the last); one
    /// sweep over the windows' edges finds the first time `n` overlap.
    /// Scanning every candidate time instead cost most of a planned
    /// replay (perf, October on 64×8).
    pub(super) fn earliest(&self, i: usize, job: &QueuedJob) -> Option<Millis> {
        let n = job.num_gpus as usize;
        let gpus = &self.gpus[i];
        if gpus.len() < n {
            return None;
        }
        let limit = job.time_limit_ms.max(1);
        // (first start, last start + 1) windows of GPU `p`, in order
        let windows = |p: usize, out: &mut dyn FnMut(Millis, Millis)| {
            let mut from = self.gpus[i][p].1.max(self.now);
            if let Some((holder, start)) = self.held_by[i][p] {
                if holder != job.id {
                    from = from.max(start);
                }
            }
            for &(a, b, _) in &self.bookings[i][p] {
                if b <= from {
                    continue;
                }
                if a - limit >= from {
                    out(from, a - limit + 1);
                }
                from = b;
            }
            out(from, Millis::MAX);
        };
        if n == 1 {
            // most jobs: the first window of any GPU, no sweep
            let mut first = Millis::MAX;
            for p in 0..gpus.len() {
                let mut seen = false;
                windows(p, &mut |from, _| {
                    if !seen {
                        first = first.min(from);
                        seen = true;
                    }
                });
            }
            return Some(first);
        }
        let mut edges: Vec<(Millis, i32)> = Vec::with_capacity(gpus.len() * 2);
        for p in 0..gpus.len() {
            windows(p, &mut |from, to| {
                edges.push((from, 1));
                if to != Millis::MAX {
                    edges.push((to, -1));
                }
            });
        }
        // a window closing at t is counted out before one opening at t
        edges.sort_unstable();
        let mut open = 0;
        edges.iter().find_map(|&(t, d)| {
            open += d;
            (d > 0 && open >= n as i32).then_some(t)
        })
    }

    /// Up to `job`'s count of GPUs of slot `i` for its start at `at`,
    /// `prefer`red first (all of them at an [`earliest`] start).
    ///
    /// [`earliest`]: Timeline::earliest
    pub(super) fn pick(&self, i: usize, job: &QueuedJob, at: Millis, prefer: &[u32]) -> Vec<u32> {
        let mut ok = self.usable_at(i, job, at, prefer);
        ok.truncate(job.num_gpus as usize);
        ok
    }

    /// GPUs of slot `i` held (this cycle or the last) for other jobs.
    pub(super) fn held_by_others(&self, i: usize) -> usize {
        self.holds_on[i]
    }

    /// GPUs to start `job` on slot `i` now without touching a booking or
    /// a GPU held for a planned job.
    pub(super) fn start_now(&self, i: usize, job: &QueuedJob) -> Option<Vec<u32>> {
        let gpus = self.pick(i, job, self.now, &[]);
        (gpus.len() == job.num_gpus as usize).then_some(gpus)
    }

    pub(super) fn book(&mut self, i: usize, gpus: &[u32], start: Millis, to: Millis, job: JobId) {
        let from = start - HOLD_AHEAD_MS;
        for &g in gpus {
            if let Some(p) = self.position(i, g) {
                let list = &mut self.bookings[i][p];
                let at = list.partition_point(|&(a, _, _)| a < from);
                list.insert(at, (from, to, job));
            }
        }
        self.window_cache = None;
    }

    /// Per job, its booked GPUs idle now and held for nobody: no job
    /// fitted before its start (the drain, charged to it). An idle GPU
    /// booked for several jobs is the first one's: the later ones would
    /// not keep it idle.
    pub(super) fn drained(&self) -> FxHashMap<JobId, u32> {
        let mut drained: FxHashMap<JobId, u32> = FxHashMap::default();
        for i in 0..self.slots.len() {
            for (p, &(_, free)) in self.gpus[i].iter().enumerate() {
                if free > self.now || self.held_by[i][p].is_some() {
                    continue;
                }
                if let Some(&(_, _, job)) = self.bookings[i][p].iter().find(|&&(_, to, _)| to > self.now) {
                    *drained.entry(job).or_default() += 1;
                }
            }
        }
        drained
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
            for (p, &(_, free)) in self.gpus[i].iter().enumerate() {
                if free > self.now {
                    continue;
                }
                let booked = self.bookings[i][p].iter().filter(|&&(_, to, _)| to > self.now).map(|&(from, _, _)| from);
                let held = self.held_by[i][p].map(|(_, start)| start);
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
        self.free_sorted[i] = sorted_free(&self.gpus[i]);
        self.by_bound.clear();
        self.window_cache = None;
        self.max_idle = max_idle(self.slots.iter().map(|p| p.usable).zip(&self.idle));
    }

    pub(super) fn could_fit_now(&mut self, job: &QueuedJob) -> bool {
        let key = (job.num_gpus, job.min_vram_gb);
        if let Some(&fit) = self.fit_now.get(&key) {
            return fit;
        }
        let fit = (0..self.slots.len()).any(|i| self.fits(i, job) && self.initial_free[i] >= job.num_gpus as usize);
        self.fit_now.insert(key, fit);
        fit
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

fn sorted_free(gpus: &[(u32, Millis)]) -> Vec<Millis> {
    let mut free: Vec<Millis> = gpus.iter().map(|&(_, at)| at).collect();
    free.sort_unstable();
    free
}

fn max_idle<'b>(slots: impl Iterator<Item = (bool, &'b usize)>) -> usize {
    slots.filter(|(usable, _)| *usable).map(|(_, &idle)| idle).max().unwrap_or(0)
}
