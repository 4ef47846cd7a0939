//! `planned`'s drains (§11): which planned jobs may book a start later
//! than now, and what the GPUs they keep idle cost their labs.
//!
//! A booked start keeps every job whose limit would run into it off the
//! booked GPUs, so GPUs stand idle until it (the drain). Booking one for
//! every job of the plan (v2) drained the cluster for heavy labs' large
//! jobs, and light labs paid for it in waits while nobody was charged
//! for the idle GPU-seconds. Here at most a budget of jobs books a drain
//! at once (selective reservation: Srinivasan, Kettimuthu, Subramani and
//! Sadayappan, 2002), only once a job has waited a share of its limit (its
//! expansion factor), and the idle GPUs a drain keeps are charged to the
//! waiting job's lab like held GPUs (lazily, §5 R4) — so fair share
//! decides who pays for large jobs.

use rustc_hash::FxHashSet;

use super::model::*;
use super::timeline::Timeline;

/// The drains one cycle may still hand out.
pub(super) struct Drains {
    /// Jobs that drained last cycle and may go on (they keep theirs first:
    /// a drain thrown away wasted what it gathered).
    kept: FxHashSet<JobId>,
    /// New drains left.
    free: u32,
    after_percent: u32,
}

impl Drains {
    /// `queue`: the jobs in the cycle's order.
    pub(super) fn new<'a>(
        snap: &Snapshot,
        params: &PlannedParams,
        queue: impl IntoIterator<Item = &'a QueuedJob>,
    ) -> Self {
        let budget = match params.drains {
            None => u32::MAX,
            Some(DrainBudget::Jobs(k)) => k,
            Some(DrainBudget::PercentOfPlacements(p)) => {
                let usable = snap.placements.iter().filter(|p| p.usable).count() as u64;
                (usable * u64::from(p)).div_ceil(100).max(1) as u32
            }
        };
        let kept: FxHashSet<JobId> = queue
            .into_iter()
            .take(params.depth)
            .filter(|j| j.reservation.is_some())
            .map(|j| j.id)
            .take(budget as usize)
            .collect();
        Drains { free: budget - kept.len() as u32, kept, after_percent: params.drain_after_percent }
    }

    /// Whether `job` may book a start later than now.
    pub(super) fn may_drain(&self, job: &QueuedJob, now: Millis) -> bool {
        if self.kept.contains(&job.id) {
            return true;
        }
        let waited = i128::from(now - job.queue_entered_at_ms);
        self.free > 0 && waited * 100 >= i128::from(self.after_percent) * i128::from(job.time_limit_ms.max(1))
    }

    /// `job` booked a start later than now.
    pub(super) fn took(&mut self, job: JobId) {
        if !self.kept.contains(&job) {
            self.free = self.free.saturating_sub(1);
        }
    }
}

/// Charges each planned job the GPUs its booking keeps idle after this
/// cycle's starts, from now until the next cycle (accrued with its
/// reservation, which a drain without held GPUs gets too).
pub(super) fn charge_drains(plan: &mut Plan, time: &Timeline<'_>) {
    // only a planned job is charged a drain: with none (most cycles on a
    // cluster with room) no GPU needs looking at
    if !plan.waiting.iter().any(|w| matches!(w.reason, PendingReason::Planned { .. })) {
        return;
    }
    let drained = time.drained();
    for w in &mut plan.waiting {
        let PendingReason::Planned { node, tier, .. } = &w.reason else { continue };
        let n = drained.get(&w.job).copied().unwrap_or(0);
        match &mut w.reservation {
            Some(res) => res.drained = n,
            None if n > 0 => {
                w.reservation = Some(Box::new(Reservation {
                    node: node.clone(),
                    tier: tier.clone(),
                    gpus: Vec::new(),
                    drained: n,
                    accrued_at_ms: time.now,
                }))
            }
            None => {}
        }
    }
}
