//! The planned policy's view of time (§11): when each GPU of each
//! placement is free, what the plans of earlier jobs booked, and which
//! idle GPUs are held for whom — with the searches the policy asks of it
//! (the earliest start a placement can give, a start now that touches no
//! booking or hold).

use rustc_hash::FxHashMap;

use super::model::*;
use super::placements::tier_fits;

/// Idle GPUs are held for a planned job once its start is this near:
/// earlier, holding them would only show an idle GPU as taken (backfill
/// may use it anyway, up to the planned start).
pub const HOLD_AHEAD_MS: Millis = 10 * 60_000;

/// A GPU whose end is unknown (a dispatch without a limit) is assumed busy
/// this long.
pub(super) const UNKNOWN_END_MS: Millis = 24 * 3_600_000;

/// When each GPU of each placement is free, and what the plan booked.
///
/// Per-GPU state is kept in flat vectors, slot `i`'s GPUs at
/// `start[i]..start[i + 1]` (one allocation each, not one per placement:
/// the timeline is built every cycle, and 80 placements' vectors were a
/// fifth of a planned replay at 80×8).
pub(super) struct Timeline<'a> {
    pub(super) now: Millis,
    pub(super) slots: Vec<&'a PlacementState>,
    pub(super) tiers: Vec<&'a TierInfo>,
    /// Where each slot's GPUs begin in the per-GPU vectors (and the end).
    pub(super) start: Vec<usize>,
    /// Per GPU: (gpu, free from), by GPU within its slot.
    pub(super) gpus: Vec<(u32, Millis)>,
    /// Per slot: the free-from times in order (the n-th is a start's
    /// lower bound, asked for every placement of every planned job).
    pub(super) free_sorted: Vec<Millis>,
    /// Per slot, in order (as `free_sorted`): the earliest each GPU could
    /// start the shortest job, after the bookings in its way (holds
    /// aside) — no start there is earlier, whatever the job. Kept as
    /// bookings and starts change it: the start search skips a placement
    /// that cannot beat the best start found without trying it (1-GPU
    /// jobs behind others' bookings tried 22 placements each, 61 million
    /// tries in a month at 80×8).
    pub(super) open_sorted: Vec<Millis>,
    /// Per GPU: (from, to, for whom) that planned starts keep other jobs
    /// off, by `from`; never overlapping. `from` is [`HOLD_AHEAD_MS`]
    /// before the start: the GPU will be held then, and a plan that let a
    /// job run into the hold would not be kept.
    pub(super) bookings: Vec<Vec<(Millis, Millis, JobId)>>,
    /// Per slot: GPUs free when the cycle began (for the waiting reason).
    pub(super) initial_free: Vec<usize>,
    /// [`Timeline::could_fit_now`] by (GPUs, minimum VRAM): asked for
    /// every job the plan leaves waiting, thousands a cycle under
    /// overload, and a scan of every placement each time was a tenth of
    /// a planned replay at 48×8.
    pub(super) fit_now: FxHashMap<(u32, u32), bool>,
    /// Per slot: GPUs idle now (free and not started on this cycle).
    pub(super) idle: Vec<usize>,
    pub(super) max_idle: usize,
    /// The most GPUs of one placement.
    pub(super) widest: usize,
    /// [`Timeline::longest_window`], until a booking, hold or start changes it.
    pub(super) window_cache: Option<Millis>,
    /// Per GPU: held this cycle for a planned job until its start; no job
    /// behind it may use the GPU before.
    pub(super) held_by: Vec<Option<(JobId, Millis)>>,
    pub(super) any_held: bool,
    /// Holds of the last cycle not decided again yet, by job (the slot of
    /// each GPU): an earlier job avoids them where it can (a planned job
    /// keeps its placement).
    pub(super) held_before: FxHashMap<JobId, Vec<usize>>,
    /// Per slot: GPUs held this cycle or the last (not decided again),
    /// counted as they change (asked for every candidate placement).
    pub(super) holds_on: Vec<usize>,
    /// Slots in the dispatch order (best tier, then node).
    pub(super) by_order: Vec<usize>,
    /// Per GPU count `n` (index `n`): every slot by when its `n`-th GPU
    /// frees up, then the dispatch order — (bound, position, slot) — until
    /// a start changes a free time. Bookings and holds leave it as it is,
    /// so the planned jobs of a cycle share it instead of each sorting the
    /// placements (a heap per job was a quarter of a planned replay).
    pub(super) by_bound: Vec<Option<Vec<(Millis, usize, usize)>>>,
}

impl<'a> Timeline<'a> {
    /// Where slot `i`'s GPUs are in the per-GPU vectors.
    pub(super) fn span(&self, i: usize) -> std::ops::Range<usize> {
        self.start[i]..self.start[i + 1]
    }

    /// Slot `i`'s GPUs: (gpu, free from).
    pub(super) fn of(&self, i: usize) -> &[(u32, Millis)] {
        &self.gpus[self.span(i)]
    }

    /// Fills [`Timeline::bounds`] for `n` GPUs.
    pub(super) fn sort_bounds(&mut self, n: u32) {
        let n = n as usize;
        // no placement has that many GPUs: nothing to sort (and a GPU
        // count from a bad row sizes nothing)
        if n > self.widest {
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
        // `slots` is by (node, tier)
        self.slots.binary_search_by(|p| (p.node.as_str(), p.tier.as_str()).cmp(&(node, tier))).ok()
    }

    pub(super) fn fits(&self, i: usize, job: &QueuedJob) -> bool {
        self.slots[i].usable && job.num_gpus <= self.slots[i].capacity && tier_fits(self.tiers[i], job)
    }

    /// The dispatch order among placements: best tier first, then node.
    pub(super) fn order_key(&self, i: usize) -> (i64, &str) {
        (-self.tiers[i].sort_order, self.slots[i].node.as_str())
    }

    pub(super) fn free_at(&self, i: usize, gpu: u32) -> Millis {
        self.position(i, gpu).map_or(Millis::MAX, |p| self.gpus[p].1)
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
            n => self.free_sorted[self.span(i)].get(n - 1).copied(),
        };
        nth.unwrap_or(Millis::MAX).max(self.now)
    }

    /// Where GPU `gpu` of slot `i` is in the per-GPU vectors.
    fn position(&self, i: usize, gpu: u32) -> Option<usize> {
        self.of(i).binary_search_by_key(&gpu, |&(g, _)| g).ok().map(|p| self.start[i] + p)
    }

    fn booked_at(&self, pos: usize, from: Millis, to: Millis) -> bool {
        self.bookings[pos].iter().any(|&(a, b, _)| a < to && from < b)
    }

    /// Held this cycle for another job whose start is after `at`.
    fn held_against(&self, pos: usize, job: JobId, at: Millis) -> bool {
        self.any_held && self.held_by[pos].is_some_and(|(holder, start)| holder != job && at < start)
    }

    /// Whether the GPU at `pos` can run `job` over `[at, to)`: free by
    /// then, no booking in the way, not held for another job.
    fn usable(&self, pos: usize, job: &QueuedJob, at: Millis, to: Millis) -> bool {
        self.gpus[pos].1 <= at && !self.booked_at(pos, at, to) && !self.held_against(pos, job.id, at)
    }

    /// Whether the GPU is held this cycle (for a job decided before).
    pub(super) fn is_held(&self, i: usize, gpu: u32) -> bool {
        self.position(i, gpu).is_some_and(|p| self.held_by[p].is_some())
    }

    /// Holds the GPU for `job`, planned to start at `start`.
    pub(super) fn hold(&mut self, i: usize, gpu: u32, job: JobId, start: Millis) {
        if let Some(p) = self.position(i, gpu) {
            if self.held_by[p].replace((job, start)).is_none() {
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
        self.span(i).filter(|&p| self.usable(p, job, at, to)).nth(n.saturating_sub(1)).is_some()
    }

    /// GPUs of slot `i` free over `[at, at + limit)`, `prefer`red first.
    pub(super) fn usable_at(&self, i: usize, job: &QueuedJob, at: Millis, prefer: &[u32]) -> Vec<u32> {
        let to = at + job.time_limit_ms.max(1);
        let mut ok: Vec<u32> = self.span(i).filter(|&p| self.usable(p, job, at, to)).map(|p| self.gpus[p].0).collect();
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
        let span = self.span(i);
        if span.len() < n {
            return None;
        }
        let limit = job.time_limit_ms.max(1);
        if n == 1 {
            // most jobs: the first window of any GPU, no sweep
            return span.map(|p| self.windows(p, job.id, limit).next().map_or(Millis::MAX, |w| w.0)).min();
        }
        let mut edges: Vec<(Millis, i32)> = Vec::with_capacity(span.len() * 2);
        for p in span {
            for (from, to) in self.windows(p, job.id, limit) {
                edges.push((from, 1));
                if to != Millis::MAX {
                    edges.push((to, -1));
                }
            }
        }
        // a window closing at t is counted out before one opening at t
        edges.sort_unstable();
        let mut open = 0;
        edges.iter().find_map(|&(t, d)| {
            open += d;
            (d > 0 && open >= n as i32).then_some(t)
        })
    }

    /// The (first start, last start + 1) windows in which the GPU at `pos`
    /// can start `job` (a `limit` long), in order: from when it is free
    /// and no other job's hold stops it, up to the last start that still
    /// ends before its next booking; open after the last.
    fn windows(&self, pos: usize, job: JobId, limit: Millis) -> impl Iterator<Item = (Millis, Millis)> + '_ {
        let mut from = self.gpus[pos].1.max(self.now);
        if let Some((holder, start)) = self.held_by[pos] {
            if holder != job {
                from = from.max(start);
            }
        }
        self.windows_from(pos, from, limit)
    }

    /// [`Timeline::windows`] from `from` on, holds aside.
    fn windows_from(&self, pos: usize, mut from: Millis, limit: Millis) -> impl Iterator<Item = (Millis, Millis)> + '_ {
        let mut bookings = self.bookings[pos].iter();
        let mut open = true;
        std::iter::from_fn(move || {
            for &(a, b, _) in bookings.by_ref() {
                if b <= from {
                    continue;
                }
                let window = (a - limit >= from).then_some((from, a - limit + 1));
                from = b;
                if window.is_some() {
                    return window;
                }
            }
            // the last, open-ended
            std::mem::take(&mut open).then_some((from, Millis::MAX))
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
                let list = &mut self.bookings[p];
                let at = list.partition_point(|&(a, _, _)| a < from);
                list.insert(at, (from, to, job));
            }
        }
        self.window_cache = None;
        self.sort_open(i);
    }

    /// No start on slot `i` for `n` GPUs before its n-th GPU is open,
    /// bookings counted ([`Timeline::open_sorted`]); at least
    /// [`Timeline::lower_bound`].
    pub(super) fn open_bound(&self, i: usize, n: u32) -> Millis {
        match n as usize {
            0 => self.now,
            n => self.open_sorted[self.span(i)].get(n - 1).copied().unwrap_or(Millis::MAX),
        }
    }

    /// Recomputes slot `i`'s [`Timeline::open_sorted`]: each GPU's first
    /// window for a job of 1 ms, holds aside.
    fn sort_open(&mut self, i: usize) {
        let span = self.span(i);
        for p in span.clone() {
            let free = self.gpus[p].1.max(self.now);
            let open = self.windows_from(p, free, 1).next().map_or(Millis::MAX, |w| w.0);
            self.open_sorted[p] = open;
        }
        self.open_sorted[span].sort_unstable();
    }

    /// Brings slot `i`'s idle count and its ordered free and open times up
    /// to its GPUs' free times (after the build, and after each start).
    pub(super) fn refresh(&mut self, i: usize) {
        let span = self.span(i);
        self.idle[i] = self.of(i).iter().filter(|&&(_, at)| at <= self.now).count();
        for p in span.clone() {
            self.free_sorted[p] = self.gpus[p].1;
        }
        self.free_sorted[span.clone()].sort_unstable();
        if self.bookings[span.clone()].iter().all(Vec::is_empty) {
            // nothing booked (as at the build): open when free
            for p in span {
                self.open_sorted[p] = self.free_sorted[p].max(self.now);
            }
        } else {
            self.sort_open(i);
        }
    }

    /// Per job, its booked GPUs idle now and held for nobody: no job
    /// fitted before its start (the drain, charged to it). An idle GPU
    /// booked for several jobs is the first one's: the later ones would
    /// not keep it idle.
    pub(super) fn drained(&self) -> FxHashMap<JobId, u32> {
        let mut drained: FxHashMap<JobId, u32> = FxHashMap::default();
        for (p, &(_, free)) in self.gpus.iter().enumerate() {
            if free > self.now || self.held_by[p].is_some() {
                continue;
            }
            if let Some(&(_, _, job)) = self.bookings[p].iter().find(|&&(_, to, _)| to > self.now) {
                *drained.entry(job).or_default() += 1;
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
            for p in self.span(i) {
                if self.gpus[p].1 > self.now {
                    continue;
                }
                let booked = self.bookings[p].iter().filter(|&&(_, to, _)| to > self.now).map(|&(from, _, _)| from);
                let held = self.held_by[p].map(|(_, start)| start);
                let until = booked.chain(held).min().map_or(Millis::MAX, |t| t - self.now);
                longest = longest.max(until);
            }
        }
        self.window_cache = Some(longest);
        longest
    }

    /// The GPUs run a job until `until`.
    pub(super) fn run(&mut self, i: usize, gpus: &[u32], until: Millis) {
        let span = self.span(i);
        for (g, at) in self.gpus[span].iter_mut() {
            if gpus.contains(g) {
                *at = until;
            }
        }
        self.refresh(i);
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

pub(super) fn max_idle<'b>(slots: impl Iterator<Item = (bool, &'b usize)>) -> usize {
    slots.filter(|(usable, _)| *usable).map(|(_, &idle)| idle).max().unwrap_or(0)
}
