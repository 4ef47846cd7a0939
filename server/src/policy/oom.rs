//! How an attempt ended, and GPU-OOM escalation (policy §6).

use super::model::TierInfo;

/// The default GPU-OOM signatures (admin-configurable).
pub const DEFAULT_GPU_OOM_PATTERNS: &[&str] = &[
    "CUDA out of memory",
    "OutOfMemoryError",
    "CUDA_ERROR_OUT_OF_MEMORY",
    "cudaErrorMemoryAllocation",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "RESOURCE_EXHAUSTED: Out of memory",
];

/// Only this much of the end of the output is searched.
pub const OOM_TAIL_BYTES: usize = 64 * 1024;

/// At most this many attempts per job.
pub const MAX_ATTEMPTS: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Completed,
    Failed,
    /// Killed for host RAM (Slurm OUT_OF_MEMORY, cgroup OOM): not a GPU OOM.
    HostOom,
    GpuOom,
    TimeLimit,
    Cancelled,
    /// The executor lost track of it (its processes vanished unrecorded).
    Lost,
    /// Stopped for writing more than a configured limit allows.
    OverLimit(OutputLimit),
}

/// The per-job limits on what an attempt may write (policy §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputLimit {
    /// `executor.max_log_bytes`: its stdout and stderr.
    Log,
    /// `executor.max_output_bytes`: its output directory.
    Output,
}

impl OutputLimit {
    /// The job's `end_reason`.
    pub fn reason(self) -> &'static str {
        match self {
            OutputLimit::Log => "LOG_LIMIT",
            OutputLimit::Output => "OUTPUT_LIMIT",
        }
    }
}

/// What the executor reports about an attempt's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSignal {
    Exited(i32),
    HostOomKilled,
    TimeLimit,
    Cancelled,
    /// Started, but gone without a recorded end (e.g. the machine rebooted).
    Lost,
    /// Stopped by the executor for writing past a limit.
    OverLimit(OutputLimit),
}

/// Classifies an attempt's end; `log_tail` is its output's last bytes.
pub fn classify(end: EndSignal, log_tail: &str, patterns: &[&str]) -> AttemptOutcome {
    match end {
        EndSignal::Exited(0) => AttemptOutcome::Completed,
        EndSignal::Exited(_) => {
            let start = log_tail.len().saturating_sub(OOM_TAIL_BYTES);
            let start = (start..log_tail.len()).find(|&i| log_tail.is_char_boundary(i)).unwrap_or(log_tail.len());
            let tail = log_tail[start..].to_lowercase();
            if patterns.iter().any(|p| tail.contains(&p.to_lowercase())) {
                AttemptOutcome::GpuOom
            } else {
                AttemptOutcome::Failed
            }
        }
        EndSignal::HostOomKilled => AttemptOutcome::HostOom,
        EndSignal::TimeLimit => AttemptOutcome::TimeLimit,
        EndSignal::Cancelled => AttemptOutcome::Cancelled,
        EndSignal::Lost => AttemptOutcome::Lost,
        EndSignal::OverLimit(limit) => AttemptOutcome::OverLimit(limit),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escalation {
    /// Back to the global queue with this minimum VRAM and attempt number.
    Retry { min_vram_gb: u32, attempt: u32 },
    /// FAILED with reason `OOM_NO_LARGER_TIER`.
    NoLargerTier,
}

/// After a GPU OOM on a tier with `failed_vram_gb`: retry on a tier with
/// more VRAM that can take `num_gpus`, if one exists and attempts remain.
pub fn escalate(tiers: &[TierInfo], failed_vram_gb: u32, num_gpus: u32, attempt: u32) -> Escalation {
    let min_vram_gb = failed_vram_gb + 1;
    let larger = tiers.iter().any(|t| t.active && t.vram_gb >= min_vram_gb && t.max_gpus >= num_gpus);
    if larger && attempt < MAX_ATTEMPTS {
        Escalation::Retry { min_vram_gb, attempt: attempt + 1 }
    } else {
        Escalation::NoLargerTier
    }
}

/// The most attempts a job can have when its first runs on a tier with
/// `first_vram_gb`: that one, then each retry [`escalate`] would grant,
/// on the smallest tier that qualifies (a larger one leaves fewer).
pub fn most_attempts(tiers: &[TierInfo], first_vram_gb: u32, num_gpus: u32) -> u32 {
    let (mut attempt, mut vram) = (1, first_vram_gb);
    while let Escalation::Retry { min_vram_gb, attempt: next } = escalate(tiers, vram, num_gpus, attempt) {
        attempt = next;
        vram = tiers
            .iter()
            .filter(|t| t.active && t.vram_gb >= min_vram_gb && t.max_gpus >= num_gpus)
            .map(|t| t.vram_gb)
            .min()
            .unwrap_or(min_vram_gb);
    }
    attempt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers() -> Vec<TierInfo> {
        vec![
            TierInfo { name: "rtx3080ti".into(), tflops: 34.1, vram_gb: 12, sort_order: 10, max_gpus: 2, active: true },
            TierInfo { name: "rtx4090".into(), tflops: 82.6, vram_gb: 24, sort_order: 20, max_gpus: 2, active: true },
        ]
    }

    #[test]
    fn classifies_attempt_ends() {
        let p = DEFAULT_GPU_OOM_PATTERNS;
        let cases = [
            (EndSignal::Exited(0), "CUDA out of memory", AttemptOutcome::Completed),
            (EndSignal::Exited(1), "RuntimeError: CUDA OUT OF MEMORY. Tried to allocate", AttemptOutcome::GpuOom),
            (EndSignal::Exited(1), "jax: RESOURCE_EXHAUSTED: Out of memory while trying", AttemptOutcome::GpuOom),
            (EndSignal::Exited(1), "torch.OutOfMemoryError", AttemptOutcome::GpuOom),
            (EndSignal::Exited(2), "ValueError: bad shape", AttemptOutcome::Failed),
            (EndSignal::HostOomKilled, "CUDA out of memory", AttemptOutcome::HostOom),
            (EndSignal::TimeLimit, "", AttemptOutcome::TimeLimit),
        ];
        for (end, log, want) in cases {
            assert_eq!(classify(end, log, p), want, "{end:?} {log}");
        }
        // only the last 64 KiB count
        let old = format!("CUDA out of memory\n{}", "x".repeat(OOM_TAIL_BYTES));
        assert_eq!(classify(EndSignal::Exited(1), &old, p), AttemptOutcome::Failed);
    }

    #[test]
    fn escalates_to_a_larger_tier_then_gives_up() {
        assert_eq!(escalate(&tiers(), 12, 2, 1), Escalation::Retry { min_vram_gb: 13, attempt: 2 });
        assert_eq!(escalate(&tiers(), 24, 1, 2), Escalation::NoLargerTier, "no tier above 24 GB");
        assert_eq!(escalate(&tiers(), 12, 4, 1), Escalation::NoLargerTier, "larger tier cannot take 4 GPUs");
        assert_eq!(escalate(&tiers(), 12, 1, 3), Escalation::NoLargerTier, "at most 3 attempts");
        let mut t = tiers();
        t[1].active = false;
        assert_eq!(escalate(&t, 12, 1, 1), Escalation::NoLargerTier, "inactive tiers do not count");
    }
}
