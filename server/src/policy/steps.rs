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
/// Keys are computed once per job, not per comparison.
pub(super) fn fair_share_order(snap: &Snapshot, queue: Vec<QueuedJob>) -> Vec<QueuedJob> {
    let usage_now: FxHashMap<LabId, f64> = snap.labs.iter().map(|l| (l.lab, usage::decayed(l, snap.now_ms))).collect();
    // the keys are sorted, not the jobs: moving whole jobs about was a
    // tenth of a planned replay (perf, October on 56×8)
    // and as integers: usage in `f64::total_cmp`'s order, so the tuples
    // compare field by field without a closure (a float comparator was a
    // tenth of a planned replay at 48×8, thousands waiting each cycle)
    let mut keyed: Vec<(i64, Millis, JobId, usize)> = queue
        .iter()
        .enumerate()
        .map(|(i, j)| (total_order(usage_now.get(&j.lab).copied().unwrap_or(0.0)), j.queue_entered_at_ms, j.id, i))
        .collect();
    keyed.sort_unstable();
    in_order(queue, keyed.into_iter().map(|k| k.3))
}

/// `x` as an integer ordered as [`f64::total_cmp`] orders floats.
fn total_order(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    // negative floats' bits count down: flip all but the sign
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The jobs at these positions of `queue`, in this order, each moved once
/// (a position given twice or out of range yields nothing).
pub(super) fn in_order(queue: Vec<QueuedJob>, order: impl IntoIterator<Item = usize>) -> Vec<QueuedJob> {
    let mut jobs: Vec<Option<QueuedJob>> = queue.into_iter().map(Some).collect();
    order.into_iter().filter_map(|at| jobs.get_mut(at).and_then(Option::take)).collect()
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

    proptest! {
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
