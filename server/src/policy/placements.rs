//! The cycle's working view of placements: which GPUs are idle for whom,
//! and an index that finds the best available placement for a job in
//! O(tiers × log placements) instead of scanning all of them.

use std::collections::{BTreeSet, HashMap};

use super::model::{PlacementState, QueuedJob, TierInfo};

pub(crate) struct Slot<'a> {
    pub state: &'a PlacementState,
    pub tier: &'a TierInfo,
    /// Position of `tier` in `Placements::tiers`.
    pub tier_pos: usize,
    /// Idle for anyone: free, not reserved, not taken this cycle. Sorted.
    pub idle: Vec<u32>,
    /// GPUs of the live reservation on this placement (if any).
    pub reserved: Vec<u32>,
    pub backfill: Vec<u32>,
}

pub(crate) struct Placements<'a> {
    /// Sorted by node name, then tier name: index order is the tie-break.
    pub slots: Vec<Slot<'a>>,
    /// Tiers with at least one placement, best `sort_order` first.
    pub tiers: Vec<&'a TierInfo>,
    /// Per tier: (idle count, slot index) of usable placements.
    index: Vec<BTreeSet<(u32, usize)>>,
    by_key: HashMap<(&'a str, &'a str), usize>,
    /// Per tier: the most free GPUs any usable placement had at cycle start.
    pub initial_max_free: Vec<u32>,
}

/// Whether `tier` may ever host `job` (policy §1 "fits", §6 minimum VRAM).
pub(crate) fn tier_fits(tier: &TierInfo, job: &QueuedJob) -> bool {
    tier.active && job.num_gpus <= tier.max_gpus && tier.vram_gb >= job.min_vram_gb
}

impl<'a> Placements<'a> {
    pub fn new(states: &'a [PlacementState], tiers: &'a [TierInfo]) -> Self {
        let tier_by_name: HashMap<&str, &TierInfo> = tiers.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut order: Vec<&PlacementState> =
            states.iter().filter(|p| tier_by_name.contains_key(p.tier.as_str())).collect();
        order.sort_by(|a, b| (a.node.as_str(), a.tier.as_str()).cmp(&(b.node.as_str(), b.tier.as_str())));

        let mut used_tiers: Vec<&TierInfo> = Vec::new();
        for p in &order {
            let t = tier_by_name[p.tier.as_str()];
            if !used_tiers.iter().any(|u| u.name == t.name) {
                used_tiers.push(t);
            }
        }
        used_tiers.sort_by(|a, b| b.sort_order.cmp(&a.sort_order).then_with(|| a.name.cmp(&b.name)));
        let tier_pos: HashMap<&str, usize> = used_tiers.iter().enumerate().map(|(i, t)| (t.name.as_str(), i)).collect();

        let mut slots = Vec::with_capacity(order.len());
        let mut by_key = HashMap::with_capacity(order.len());
        let mut initial_max_free = vec![0u32; used_tiers.len()];
        for (i, p) in order.into_iter().enumerate() {
            let pos = tier_pos[p.tier.as_str()];
            let mut idle = p.free.clone();
            idle.sort_unstable();
            idle.dedup();
            if p.usable {
                initial_max_free[pos] = initial_max_free[pos].max(idle.len() as u32);
            }
            by_key.insert((p.node.as_str(), p.tier.as_str()), i);
            slots.push(Slot {
                state: p,
                tier: used_tiers[pos],
                tier_pos: pos,
                idle,
                reserved: Vec::new(),
                backfill: p.backfill.clone(),
            });
        }
        let index = vec![BTreeSet::new(); used_tiers.len()];
        let mut me = Placements { slots, tiers: used_tiers, index, by_key, initial_max_free };
        for i in 0..me.slots.len() {
            me.reindex_insert(i);
        }
        me
    }

    pub fn find(&self, node: &str, tier: &str) -> Option<usize> {
        self.by_key.get(&(node, tier)).copied()
    }

    fn reindex_insert(&mut self, i: usize) {
        let s = &self.slots[i];
        if s.state.usable && !s.idle.is_empty() {
            self.index[s.tier_pos].insert((s.idle.len() as u32, i));
        }
    }

    fn reindex_remove(&mut self, i: usize) {
        let s = &self.slots[i];
        self.index[s.tier_pos].remove(&(s.idle.len() as u32, i));
    }

    /// Moves `gpus` out of the idle set of slot `i` (into a reservation when
    /// `reserve`), keeping the index right.
    pub fn take(&mut self, i: usize, gpus: &[u32], reserve: bool) {
        self.reindex_remove(i);
        let slot = &mut self.slots[i];
        slot.idle.retain(|g| !gpus.contains(g));
        if reserve {
            slot.reserved.extend_from_slice(gpus);
            slot.reserved.sort_unstable();
        }
        self.reindex_insert(i);
    }

    /// Gives reserved GPUs back to idle (reservation released or dispatched
    /// elsewhere).
    pub fn unreserve(&mut self, i: usize, gpus: &[u32]) {
        self.reindex_remove(i);
        let slot = &mut self.slots[i];
        slot.reserved.retain(|g| !gpus.contains(g));
        for g in gpus {
            if slot.state.free.contains(g) && !slot.idle.contains(g) {
                slot.idle.push(*g);
            }
        }
        slot.idle.sort_unstable();
        self.reindex_insert(i);
    }

    /// Can slot `i` take `job` at all (R5 "still fits")?
    pub fn fits(&self, i: usize, job: &QueuedJob) -> bool {
        let s = &self.slots[i];
        s.state.usable && job.num_gpus <= s.state.capacity && tier_fits(s.tier, job)
    }

    /// Best placement available to `job` from idle GPUs alone: highest
    /// tier `sort_order`; among equals the fewest idle that still suffice
    /// (best fit); then node name. Returns (slot, idle count).
    pub fn best_available(&self, job: &QueuedJob) -> Option<(usize, u32)> {
        let n = job.num_gpus;
        let mut t = 0;
        while t < self.tiers.len() {
            let order = self.tiers[t].sort_order;
            let mut best: Option<(u32, usize)> = None;
            while t < self.tiers.len() && self.tiers[t].sort_order == order {
                if tier_fits(self.tiers[t], job) {
                    // capacity ≥ idle ≥ n, so the first entry ≥ (n, 0) fits
                    if let Some(&cand) = self.index[t].range((n, 0)..).next() {
                        if best.is_none_or(|b| {
                            (cand.0, self.slots[cand.1].state.node.as_str())
                                < (b.0, self.slots[b.1].state.node.as_str())
                        }) {
                            best = Some(cand);
                        }
                    }
                }
                t += 1;
            }
            if let Some((idle, i)) = best {
                return Some((i, idle));
            }
        }
        None
    }

    /// Where a new reservation goes: highest `sort_order`, then most idle,
    /// then node name, among usable placements that fit the job.
    pub fn best_to_reserve(&self, job: &QueuedJob) -> Option<usize> {
        (0..self.slots.len()).filter(|&i| self.fits(i, job)).min_by(|&a, &b| {
            let (sa, sb) = (&self.slots[a], &self.slots[b]);
            sb.tier
                .sort_order
                .cmp(&sa.tier.sort_order)
                .then(sb.idle.len().cmp(&sa.idle.len()))
                .then(sa.state.node.cmp(&sb.state.node))
                .then(a.cmp(&b))
        })
    }

    /// Would some placement have been available to `job` with nothing
    /// taken this cycle and no reservation? Tells "waiting for higher
    /// rank" from "no idle GPU".
    pub fn could_fit_at_cycle_start(&self, job: &QueuedJob) -> bool {
        self.tiers.iter().enumerate().any(|(t, tier)| tier_fits(tier, job) && self.initial_max_free[t] >= job.num_gpus)
    }
}
