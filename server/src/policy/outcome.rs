//! The attempt-outcome table (policy §6): what an attempt's end does to
//! its job — the state it goes to, the reason recorded, and whether it is
//! retried on a larger tier after a GPU OOM. The loop records what this
//! answers; no query decides it.

use app::model::JobState;

use super::model::TierInfo;
use super::oom::{self, AttemptOutcome, EndSignal, Escalation};

/// An attempt as it ended, with what the table needs of its job.
#[derive(Debug, Clone, Copy)]
pub struct EndedAttempt<'a> {
    pub end: EndSignal,
    /// The end of its output, searched for GPU-OOM signatures.
    pub log_tail: &'a str,
    /// The job was being cancelled: whatever the end, it is CANCELLED.
    pub cancelling: bool,
    /// The VRAM of the tier it ran on.
    pub vram_gb: u32,
    pub num_gpus: u32,
    pub attempt: u32,
    /// A GPU OOM may send it to a larger tier: not for an interactive
    /// session (policy §12), whose notebook state a restart would lose.
    pub escalates: bool,
}

/// Where the job goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub state: JobState,
    /// The attempt's reason, and the job's `end_reason` when it ends.
    pub reason: &'static str,
    /// Back to the global queue for a larger tier.
    pub retry: Option<Retry>,
    pub exit_code: Option<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    pub min_vram_gb: u32,
    pub attempt: u32,
}

pub fn verdict(a: &EndedAttempt<'_>, tiers: &[TierInfo], gpu_oom_patterns: &[&str]) -> Verdict {
    let outcome = oom::classify(a.end, a.log_tail, gpu_oom_patterns);
    let ends = |state, reason| (state, reason, None);
    let (state, reason, retry) = match outcome {
        _ if a.cancelling => ends(JobState::Cancelled, "CANCELLED"),
        AttemptOutcome::Completed => ends(JobState::Completed, "COMPLETED"),
        AttemptOutcome::Failed => ends(JobState::Failed, "NONZERO_EXIT"),
        AttemptOutcome::HostOom => ends(JobState::Failed, "HOST_OOM"),
        AttemptOutcome::TimeLimit => ends(JobState::Failed, "TIME_LIMIT"),
        AttemptOutcome::Cancelled => ends(JobState::Cancelled, "CANCELLED"),
        AttemptOutcome::Lost => ends(JobState::Failed, "EXECUTOR_LOST"),
        AttemptOutcome::OverLimit(limit) => ends(JobState::Failed, limit.reason()),
        AttemptOutcome::GpuOom if !a.escalates => ends(JobState::Failed, "GPU_OOM"),
        AttemptOutcome::GpuOom => match oom::escalate(tiers, a.vram_gb, a.num_gpus, a.attempt) {
            Escalation::Retry { min_vram_gb, attempt } => {
                (JobState::GlobalQueueWait, "GPU_OOM", Some(Retry { min_vram_gb, attempt }))
            }
            Escalation::NoLargerTier => ends(JobState::Failed, "OOM_NO_LARGER_TIER"),
        },
    };
    let exit_code = match a.end {
        EndSignal::Exited(code) => Some(code),
        _ => None,
    };
    Verdict { state, reason, retry, exit_code }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::oom::DEFAULT_GPU_OOM_PATTERNS;

    fn tier(name: &str, vram_gb: u32) -> TierInfo {
        TierInfo { name: name.into(), vram_gb, tflops: 1.0, sort_order: 0, max_gpus: 8, active: true }
    }

    fn ended(end: EndSignal, log_tail: &str) -> EndedAttempt<'_> {
        EndedAttempt { end, log_tail, cancelling: false, vram_gb: 24, num_gpus: 1, attempt: 1, escalates: true }
    }

    #[test]
    fn each_end_has_its_state_and_reason() {
        let tiers = [tier("small", 24), tier("big", 80)];
        let cases: &[(EndedAttempt<'_>, JobState, &str, Option<Retry>)] = &[
            (ended(EndSignal::Exited(0), ""), JobState::Completed, "COMPLETED", None),
            (ended(EndSignal::Exited(3), "oops"), JobState::Failed, "NONZERO_EXIT", None),
            (ended(EndSignal::HostOomKilled, ""), JobState::Failed, "HOST_OOM", None),
            (ended(EndSignal::TimeLimit, ""), JobState::Failed, "TIME_LIMIT", None),
            (ended(EndSignal::Lost, ""), JobState::Failed, "EXECUTOR_LOST", None),
            (
                ended(EndSignal::Exited(1), "RuntimeError: CUDA out of memory."),
                JobState::GlobalQueueWait,
                "GPU_OOM",
                Some(Retry { min_vram_gb: 25, attempt: 2 }),
            ),
            (
                EndedAttempt { vram_gb: 80, ..ended(EndSignal::Exited(1), "CUDA out of memory") },
                JobState::Failed,
                "OOM_NO_LARGER_TIER",
                None,
            ),
            // a session's GPU OOM ends it: no larger tier (policy §12)
            (
                EndedAttempt { escalates: false, ..ended(EndSignal::Exited(1), "CUDA out of memory") },
                JobState::Failed,
                "GPU_OOM",
                None,
            ),
            (
                EndedAttempt { cancelling: true, ..ended(EndSignal::Exited(0), "") },
                JobState::Cancelled,
                "CANCELLED",
                None,
            ),
        ];
        for (attempt, state, reason, retry) in cases {
            let v = verdict(attempt, &tiers, DEFAULT_GPU_OOM_PATTERNS);
            assert_eq!((v.state, v.reason, v.retry), (*state, *reason, *retry), "{attempt:?}");
        }
        assert_eq!(verdict(&ended(EndSignal::Exited(3), ""), &tiers, &[]).exit_code, Some(3));
        assert_eq!(verdict(&ended(EndSignal::TimeLimit, ""), &tiers, &[]).exit_code, None);
    }
}
