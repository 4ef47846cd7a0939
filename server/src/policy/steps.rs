//! The steps both policies share, and the forecast with them: the
//! maintenance phase advancing by itself (§10), the global queue's
//! fair-share order (§4), charging what a reservation accrued (§5), and a
//! waiting job's entry in the plan (§9). The seed's cycle
//! ([`super::cycle`]) and `planned` both call these, and neither calls the
//! other's internals, so a change here is a change to both, on purpose,
//! and a change to one policy cannot reach the other.

use rustc_hash::FxHashMap;

use app::model::MaintenancePhase;

use super::model::*;
use super::usage;

/// Maintenance advances on its own once its condition holds (§10).
/// Returns the phase this cycle runs in.
pub(super) fn advance_maintenance(snap: &Snapshot, plan: &mut Plan) -> MaintenancePhase {
    let phase = next_phase(snap.phase, snap.research_active, snap.backfill_active);
    if phase != snap.phase {
        plan.phase_change = Some(phase);
    }
    phase
}

/// DRAINING → BACKFILL_RECOVERY once no research runs; → ACTIVE once no
/// backfill runs. NORMAL and ACTIVE change only by an admin.
pub fn next_phase(phase: MaintenancePhase, research_active: u32, backfill_active: u32) -> MaintenancePhase {
    use MaintenancePhase::*;
    let mut p = phase;
    if p == Draining && research_active == 0 {
        p = BackfillRecovery;
    }
    if p == BackfillRecovery && backfill_active == 0 {
        p = Active;
    }
    p
}

/// The global queue's order: decayed lab usage, queue entry, job id (§4).
pub(super) fn fair_share_order(snap: &Snapshot, queue: Vec<QueuedJob>) -> Vec<QueuedJob> {
    let order = fair_share_positions(snap, &queue);
    in_order(queue, order).collect()
}

/// The positions of `queue` in fair-share order ([`fair_share_order`]).
pub(super) fn fair_share_positions(snap: &Snapshot, queue: &[QueuedJob]) -> Vec<usize> {
    // usage as integers in `f64::total_cmp`'s order, so keys compare
    // field by field without a closure (a float comparator was a tenth
    // of a planned replay at 48×8, thousands waiting each cycle)
    let usage_now: FxHashMap<LabId, i64> =
        snap.labs.iter().map(|l| (l.lab, total_order(usage::decayed(l, snap.now_ms)))).collect();
    let unknown = total_order(0.0);
    let usage_of = |j: &QueuedJob| usage_now.get(&j.lab).copied().unwrap_or(unknown);
    if queue.is_sorted_by_key(|j| (j.queue_entered_at_ms, j.id)) {
        // already in arrival order (the simulator's, and the server's but
        // for promotions): ordering by usage alone, stably, is the whole
        // order, and there are only as many usages as labs (sorting
        // thousands of keys each cycle was a sixth of a planned replay
        // at 48×8)
        let mut usages: Vec<i64> = usage_now.values().copied().chain([unknown]).collect();
        usages.sort_unstable();
        usages.dedup();
        let rank = |j: &QueuedJob| usages.binary_search(&usage_of(j)).unwrap_or_default();
        return stable_by_rank(queue.iter().map(rank).collect(), usages.len());
    }
    let mut keyed: Vec<(i64, Millis, JobId, usize)> =
        queue.iter().enumerate().map(|(i, j)| (usage_of(j), j.queue_entered_at_ms, j.id, i)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|k| k.3).collect()
}

/// Positions `0..ranks.len()` ordered by their rank (each `< count`),
/// equal ranks in position order: a counting sort.
fn stable_by_rank(ranks: Vec<usize>, count: usize) -> Vec<usize> {
    let mut next = vec![0usize; count + 1];
    for &r in &ranks {
        next[r + 1] += 1;
    }
    for r in 0..count {
        next[r + 1] += next[r];
    }
    let mut order = vec![0usize; ranks.len()];
    for (at, r) in ranks.into_iter().enumerate() {
        order[next[r]] = at;
        next[r] += 1;
    }
    order
}

/// `x` as an integer ordered as [`f64::total_cmp`] orders floats.
fn total_order(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // negative floats' bits count down: flip all but the sign
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The jobs at these positions of `queue`, in this order, each moved once
/// (a position given twice or out of range yields nothing).
pub(super) fn in_order(queue: Vec<QueuedJob>, order: Vec<usize>) -> impl Iterator<Item = QueuedJob> {
    let mut jobs: Vec<Option<QueuedJob>> = queue.into_iter().map(Some).collect();
    order.into_iter().filter_map(move |at| jobs.get_mut(at).and_then(Option::take))
}

/// A job that waits this cycle, with its rank and why.
pub(super) fn waiting(job: QueuedJob, rank: u32, reason: PendingReason) -> Waiting {
    Waiting { job: job.id, rank, reason, reservation: job.reservation, accrued: job.accrued }
}

/// Charges what the job's reservations accrued so far (R3, R5, cancel).
pub(super) fn charge_reservation(plan: &mut Plan, job: &mut QueuedJob, tier: &str) {
    let acc = std::mem::take(&mut job.accrued);
    if acc.gpu_seconds > 0.0 || acc.cost > 0.0 {
        plan.charges.push(Charge {
            lab: job.lab,
            job: job.id,
            tier: tier.to_string(),
            kind: ChargeKind::Reservation,
            gpu_seconds: acc.gpu_seconds,
            amount: acc.cost,
        });
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// (lab, usage) rows, (lab, entered s) jobs, whether in arrival order.
    type Case = (Vec<(i64, f64)>, Vec<(i64, i64)>, bool);

    /// Labs 1–5 with usages from a small set (ties between labs), and
    /// jobs of labs 1–6 (lab 6 has no usage row), in arrival order or not.
    fn queue_and_usages() -> impl Strategy<Value = Case> {
        let usages = prop::collection::vec(prop::sample::select(vec![0.0, -0.0, 1.5, 1.5, 7.0, 1e9]), 5);
        let jobs = prop::collection::vec((1i64..=6, 0i64..20), 0..60);
        (usages, jobs, any::<bool>()).prop_map(|(u, jobs, sorted)| {
            (u.into_iter().enumerate().map(|(i, v)| (i as i64 + 1, v)).collect(), jobs, sorted)
        })
    }

    proptest! {
        #[test]
        fn the_fair_share_order_is_usage_then_entry_then_id((usages, jobs, sorted) in queue_and_usages()) {
            use crate::policy::tests::{job, snapshot};
            // ids unique; entries in id order when `sorted`
            let mut queue: Vec<_> = jobs.iter().enumerate().map(|(k, &(lab, entered))| job(k as i64 * 7 % 61, lab, 1, entered * 1000)).collect();
            if sorted {
                queue.sort_by_key(|j| (j.queue_entered_at_ms, j.id));
            }
            let snap = snapshot(vec![], &usages, queue.clone());
            let usage = |lab| usages.iter().find(|u| u.0 == lab).map_or(0.0, |u| u.1);
            let mut want = queue.clone();
            want.sort_by(|a, b| usage(a.lab).total_cmp(&usage(b.lab)).then(a.queue_entered_at_ms.cmp(&b.queue_entered_at_ms)).then(a.id.cmp(&b.id)));
            let got: Vec<_> = super::fair_share_positions(&snap, &queue).into_iter().map(|at| queue[at].id).collect();
            prop_assert_eq!(got, want.iter().map(|j| j.id).collect::<Vec<_>>());
        }

        #[test]
        fn usage_keys_order_as_the_floats_do(a in any::<f64>(), b in any::<f64>()) {
            prop_assert_eq!(super::total_order(a).cmp(&super::total_order(b)), a.total_cmp(&b));
        }
    }

    #[test]
    fn usage_keys_order_the_edges_as_the_floats_do() {
        let floats = [f64::NEG_INFINITY, -1.0, -0.0, 0.0, f64::MIN_POSITIVE, 1.0, f64::INFINITY, f64::NAN];
        for a in floats {
            for b in floats {
                assert_eq!(super::total_order(a).cmp(&super::total_order(b)), a.total_cmp(&b), "{a} against {b}");
            }
        }
    }
}
