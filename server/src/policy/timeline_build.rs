//! How the [`Timeline`] is made from a snapshot each cycle: the
//! placements the policy can use, in (node, tier) order, and when each of
//! their GPUs is free. Built once per cycle, so it keeps to a few
//! allocations and no names hashed per GPU.

use rustc_hash::FxHashMap;

use super::model::*;
use super::timeline::{max_idle, Timeline, UNKNOWN_END_MS};

impl<'a> Timeline<'a> {
    pub(super) fn new(snap: &'a Snapshot) -> Self {
        // a tier named twice counts as its last row
        let tier_of = |name: &str| snap.tiers.iter().rev().find(|t| t.name == name);
        // (slot, its position in the snapshot, tier)
        let mut slots: Vec<(&PlacementState, usize, &TierInfo)> =
            snap.placements.iter().enumerate().filter_map(|(k, p)| Some((p, k, tier_of(&p.tier)?))).collect();
        fn key(p: &PlacementState) -> (&str, &str) {
            (p.node.as_str(), p.tier.as_str())
        }
        // the server and the simulator list placements in this order
        // already: checking is one comparison a pair
        if !slots.is_sorted_by(|a, b| key(a.0) <= key(b.0)) {
            slots.sort_by(|a, b| key(a.0).cmp(&key(b.0)));
        }
        let mut slot_of = vec![None; snap.placements.len()];
        for (i, &(_, k, _)) in slots.iter().enumerate() {
            slot_of[k] = Some(i);
        }
        let tiers: Vec<&TierInfo> = slots.iter().map(|s| s.2).collect();
        let slots: Vec<&PlacementState> = slots.into_iter().map(|s| s.0).collect();
        let gpus = busy_gpus(snap, &slots, &slot_of);
        let start = gpus.start;
        let gpus = gpus.gpus;
        let mut timeline = Timeline {
            free_sorted: vec![0; gpus.len()],
            open_sorted: vec![0; gpus.len()],
            bookings: vec![Vec::new(); gpus.len()],
            by_order: Vec::new(),
            now: snap.now_ms,
            max_idle: 0,
            widest: start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
            window_cache: None,
            idle: vec![0; slots.len()],
            held_by: vec![None; gpus.len()],
            any_held: false,
            held_before: FxHashMap::default(),
            holds_on: vec![0; slots.len()],
            initial_free: slots.iter().map(|p| if p.usable { p.free.len() } else { 0 }).collect(),
            fit_now: FxHashMap::default(),
            by_bound: Vec::new(),
            tiers,
            slots,
            start,
            gpus,
        };
        for j in &snap.queue {
            if let Some(r) = &j.reservation {
                if let Some(i) = timeline.find(&r.node, &r.tier) {
                    // drained GPUs too: a job that can start as early
                    // elsewhere leaves a drain that is filling alone
                    let n = r.charged_gpus() as usize;
                    timeline.held_before.entry(j.id).or_default().extend(std::iter::repeat_n(i, n));
                    timeline.holds_on[i] += n;
                }
            }
        }
        for i in 0..timeline.slots.len() {
            timeline.refresh(i);
        }
        timeline.max_idle = max_idle(timeline.slots.iter().map(|p| p.usable).zip(&timeline.idle));
        // best tier, then node: `slots` is in node order already, so its
        // positions stand for the names (no string compared per pair)
        let mut by_order: Vec<usize> = (0..timeline.slots.len()).collect();
        by_order.sort_by_key(|&i| (-timeline.tiers[i].sort_order, i));
        timeline.by_order = by_order;
        timeline
    }
}

/// Every slot's GPUs, flat, with when each is free.
struct Flat {
    /// Where each slot's GPUs begin (and, last, the end).
    start: Vec<usize>,
    /// (gpu, free from), by GPU within a slot.
    gpus: Vec<(u32, Millis)>,
}

/// When each GPU of `slots` (by node, tier) is free: now, at its job's
/// end (the limit's, or the predicted one), or a day from now if its job
/// is unknown.
fn busy_gpus(snap: &Snapshot, slots: &[&PlacementState], slot_of: &[Option<usize>]) -> Flat {
    let predicted = snap.mode.predicts_ends();
    // (slot, GPU, free from) of each busy GPU on a slot
    let mut tagged: Vec<(usize, u32, Millis)> = Vec::with_capacity(snap.busy_until.len());
    for b in &snap.busy_until {
        let Some(i) = b.placement.and_then(|k| slot_of.get(k).copied().flatten()) else { continue };
        let end = if predicted { b.predicted_ms } else { b.until_ms };
        // a busy GPU is not free now even if its job is past its limit or
        // cancelled: it frees when the job is seen to end
        tagged.push((i, b.gpu, end.max(snap.now_ms + 1)));
    }
    // by slot, keeping each slot's in the order found
    let mut from = vec![0usize; slots.len() + 1];
    for &(i, _, _) in &tagged {
        from[i + 1] += 1;
    }
    for i in 0..slots.len() {
        from[i + 1] += from[i];
    }
    let mut busy = vec![(0u32, 0 as Millis); tagged.len()];
    let mut next = from.clone();
    for (i, gpu, end) in tagged {
        busy[next[i]] = (gpu, end);
        next[i] += 1;
    }
    let all = slots.iter().map(|p| p.capacity as usize).sum();
    let mut flat = Flat { start: Vec::with_capacity(slots.len() + 1), gpus: Vec::with_capacity(all) };
    flat.start.push(0);
    let mut one: Vec<(u32, Millis)> = Vec::new();
    for (i, p) in slots.iter().enumerate() {
        let (now, busy) = (snap.now_ms, &busy[from[i]..from[i + 1]]);
        if !numbered_in_place(p, busy, now, &mut flat.gpus) {
            slot_gpus(p, busy, now, &mut one);
            flat.gpus.extend_from_slice(&one);
        }
        flat.start.push(flat.gpus.len());
    }
    flat
}

/// A slot's GPUs by number with when each is free: its free GPUs now,
/// its busy ones at their job's end, and any GPU of its capacity that
/// neither lists at a day from now (busy, end unknown).
pub(super) fn slot_gpus(p: &PlacementState, busy: &[(u32, Millis)], now: Millis, one: &mut Vec<(u32, Millis)>) {
    one.clear();
    one.extend(p.free.iter().map(|&g| (g, now)));
    one.extend(busy.iter().filter(|(g, _)| !p.free.contains(g)));
    // a GPU busy for two jobs (a cancelled one still ending, and the
    // next) is free only when the later ends: never started twice, and
    // counted once below
    one.sort_unstable();
    one.dedup_by(|later, earlier| {
        let same = later.0 == earlier.0;
        if same {
            earlier.1 = earlier.1.max(later.1);
        }
        same
    });
    // busy GPUs whose end is unknown
    let mut next = 0u32;
    let known = one.len();
    while (one.len() as u32) < p.capacity {
        while one.iter().any(|&(g, _)| g == next) {
            next += 1;
        }
        one.push((next, now + UNKNOWN_END_MS));
    }
    if one.len() > known {
        one.sort_unstable();
    }
}

/// [`slot_gpus`] appended to `out` without sorting, when every GPU the
/// slot lists is numbered below its capacity (as placements are: 0..n),
/// so a GPU's number is its place; false, nothing appended, otherwise.
/// Sorting each slot's few GPUs every cycle was a twentieth of a planned
/// replay at 80×8.
pub(super) fn numbered_in_place(
    p: &PlacementState,
    busy: &[(u32, Millis)],
    now: Millis,
    out: &mut Vec<(u32, Millis)>,
) -> bool {
    let n = p.capacity as usize;
    if p.free.iter().chain(busy.iter().map(|(g, _)| g)).any(|&g| g as usize >= n) {
        return false;
    }
    let at = out.len();
    out.extend((0..p.capacity).map(|g| (g, Millis::MIN)));
    let own = &mut out[at..];
    for &(g, end) in busy {
        let t = &mut own[g as usize].1;
        *t = (*t).max(end);
    }
    // busy ends are after now, so only a GPU nobody listed is still at
    // the mark; free GPUs are set last, as `now` may be the mark itself
    for (_, t) in own.iter_mut().filter(|(_, t)| *t == Millis::MIN) {
        *t = now + UNKNOWN_END_MS;
    }
    for &g in &p.free {
        own[g as usize].1 = now;
    }
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::tests::state;
    use super::*;

    proptest! {
        /// Placing GPUs by number gives what sorting them gives, whenever
        /// it applies: free GPUs listed twice or also busy, a GPU busy for
        /// two jobs, GPUs nobody lists, any now (the earliest time too);
        /// and it declines GPUs numbered past the capacity, leaving the
        /// output as it was.
        #[test]
        fn placing_by_number_is_sorting(
            capacity in 0u32..10,
            now in prop_oneof![Just(Millis::MIN), Just(0), -1_000_000..1_000_000i64],
            free in proptest::collection::vec(0u32..12, 0..12),
            busy in proptest::collection::vec((0u32..12, 1..100i64), 0..12),
        ) {
            let p = state("a", "t", capacity, &free);
            // busy GPUs end after now (the build sees to it)
            let busy: Vec<(u32, Millis)> = busy.into_iter().map(|(g, after)| (g, now + after)).collect();
            let mut sorted = Vec::new();
            slot_gpus(&p, &busy, now, &mut sorted);
            let mut placed = vec![(99, 99)];
            if numbered_in_place(&p, &busy, now, &mut placed) {
                prop_assert_eq!(&placed[1..], &sorted[..]);
            } else {
                prop_assert!(free.iter().chain(busy.iter().map(|(g, _)| g)).any(|&g| g >= capacity));
                prop_assert_eq!(placed, vec![(99, 99)]);
            }
        }
    }
}
