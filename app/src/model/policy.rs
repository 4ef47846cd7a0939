//! The Policy page's facts: how this deployment shares its GPUs, every
//! figure read from the running configuration and database (never typed
//! into the page's text), and where each pending or end reason is
//! explained. The page (`pages/policy.rs`) renders it; the CLI's footnotes
//! point to the same anchors.

use serde::{Deserialize, Serialize};

use super::{MaintenanceView, TierView};

/// The page's sections, by anchor (`/policy#fair-share`), in its order.
pub mod section {
    pub const OVERVIEW: &str = "overview";
    pub const TIERS: &str = "tiers";
    pub const SCHEDULING: &str = "scheduling";
    pub const FAIR_SHARE: &str = "fair-share";
    pub const QUEUE: &str = "queue";
    pub const OOM: &str = "oom";
    pub const MULTI_GPU: &str = "multi-gpu";
    pub const BACKFILL: &str = "backfill";
    pub const ISOLATION: &str = "isolation";
    pub const CANCEL: &str = "cancel";
    pub const MAINTENANCE: &str = "maintenance";
    pub const SESSIONS: &str = "sessions";
    pub const DATA: &str = "data";
    pub const REASONS: &str = "reasons";
}

/// What the executor in use enforces on every job (policy §8).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IsolationFacts {
    /// `local` or `slurm`.
    pub executor: String,
    /// Jobs run as their owner's own Unix uid.
    pub own_uid: bool,
    /// What limits CPU, memory and processes, in words (e.g. "a cgroup v2
    /// of its own"); empty when nothing does.
    pub limits: String,
    /// Only loopback inside the job (local executor's network namespace).
    pub loopback_only: bool,
    /// Private `/tmp`, `/dev/shm` and IPC per job.
    pub private_scratch: bool,
    /// Jobs may not create user namespaces.
    pub no_user_namespaces: bool,
    /// Jobs with a workspace run in this container runtime.
    pub container: String,
    /// Bytes a job's log and its output folder may reach.
    pub max_log_bytes: u64,
    pub max_output_bytes: u64,
}

/// Everything the Policy page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyView {
    pub tiers: Vec<TierView>,
    pub placements: Vec<super::views::PlacementView>,
    pub cycle_ms: u64,
    pub half_life_ms: u64,
    /// A new user's concurrency limit (the database's default).
    pub default_concurrency: i64,
    /// The viewer's own, when signed in.
    pub your_concurrency: Option<i64>,
    /// Unfinished jobs a user may have.
    pub max_unfinished: u32,
    pub default_time_limit_minutes: u32,
    pub oom_patterns: Vec<String>,
    /// How much of an attempt's output the OOM rule reads, in KiB.
    pub oom_tail_kib: u64,
    pub max_attempts: u32,
    /// `seed` or `planned`.
    pub policy: String,
    pub plan_depth: usize,
    pub max_wait_hours: u32,
    pub lift_percent: u32,
    /// Overdue jobs that may go ahead of light labs' (`u32::MAX`: all).
    pub lift_ahead_of_light: u32,
    /// GPUs left idle for a planned start are charged to the waiting lab.
    pub charge_drains: bool,
    /// Plans count on running jobs' predicted ends, not their limits.
    pub predicted_ends: bool,
    pub backfill_enabled: bool,
    pub backfill_min_idle_seconds: u64,
    pub isolation: IsolationFacts,
    pub cancel_grace_seconds: u64,
    pub maintenance: MaintenanceView,
    /// Interactive apps (policy §12), by name, and their idle timeout.
    pub session_apps: Vec<String>,
    pub session_idle_minutes: f64,
    pub sessions_per_user: u32,
    /// Research data (policy §13): quotas in bytes, the upload and
    /// dataset limits.
    pub home_quota_bytes: u64,
    pub lab_quota_bytes: u64,
    pub max_upload_bytes: u64,
    pub max_dataset_bytes: u64,
    pub scan_minutes: f64,
}

/// The section of the Policy page that explains a pending or end reason;
/// `None` for one it does not know (shown without a link).
pub fn reason_section(reason: &str) -> Option<&'static str> {
    Some(match reason_code(reason) {
        "USER_CONCURRENCY_LIMIT" | "DEPENDENCY" | "ARRAY_LIMIT" | "DEPENDENCY_NEVER_SATISFIED" => section::QUEUE,
        "WAITING_FOR_HIGHER_RANK" | "NO_IDLE_GPU" => section::SCHEDULING,
        "RESERVING" | "PLANNED" => section::MULTI_GPU,
        "MAINTENANCE" => section::MAINTENANCE,
        "GPU_OOM" | "OOM_NO_LARGER_TIER" | "HOST_OOM" => section::OOM,
        "CANCELLED" | "TIME_LIMIT" => section::CANCEL,
        "LOG_LIMIT" | "OUTPUT_LIMIT" => section::ISOLATION,
        "IDLE" => section::SESSIONS,
        "COMPLETED" | "NONZERO_EXIT" | "EXECUTOR_LOST" | "NODE_FAILURE" => section::REASONS,
        _ => return None,
    })
}

/// A reason's code without its details: `RESERVING (1/2 GPUs on n/t)` →
/// `RESERVING`.
pub fn reason_code(reason: &str) -> &str {
    reason.split([' ', '(']).next().unwrap_or(reason)
}

/// The link to a reason's explanation, e.g. `/policy#oom`.
pub fn reason_link(reason: &str) -> Option<String> {
    reason_section(reason).map(|s| format!("/policy#{s}"))
}

/// The GPU OOM escalation path: active tiers from least to most VRAM,
/// one per VRAM size (a job that ran out of memory needs more VRAM than
/// the tier it failed on, so tiers of equal VRAM are one step).
pub fn oom_path(tiers: &[TierView]) -> Vec<Vec<&TierView>> {
    let mut active: Vec<&TierView> = tiers.iter().filter(|t| t.active).collect();
    active.sort_by_key(|t| (t.vram_gb, std::cmp::Reverse(t.sort_order)));
    let mut steps: Vec<Vec<&TierView>> = Vec::new();
    for tier in active {
        match steps.last_mut() {
            Some(step) if step[0].vram_gb == tier.vram_gb => step.push(tier),
            _ => steps.push(vec![tier]),
        }
    }
    steps
}

/// The fair-share worked example on a tier of `tflops`: one GPU for an
/// hour; two GPUs for 30 minutes after holding one for 10 (TFLOP·s).
pub fn worked_example(tflops: f64) -> (f64, f64, f64) {
    let hour = 3_600.0 * tflops;
    let run = 2.0 * 1_800.0 * tflops;
    let held = 600.0 * tflops;
    (hour, run, held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(name: &str, vram_gb: i64, sort_order: i64, active: bool) -> TierView {
        TierView {
            name: name.into(),
            display_name: name.into(),
            vram_gb,
            tflops: 10.0,
            sort_order,
            max_gpus: 2,
            max_time_limit_minutes: 60,
            slurm_partition: String::new(),
            cpus_per_gpu: 1,
            mem_gb_per_gpu: 1,
            active,
        }
    }

    #[test]
    fn every_reason_the_product_gives_has_a_section() {
        let table = [
            ("USER_CONCURRENCY_LIMIT", Some(section::QUEUE)),
            ("ARRAY_LIMIT (4 running)", Some(section::QUEUE)),
            ("RESERVING (1/2 GPUs on node-4090/rtx4090)", Some(section::MULTI_GPU)),
            ("PLANNED (0/8 GPUs held on a/b, start 2026-12-05T01:00Z)", Some(section::MULTI_GPU)),
            ("NO_IDLE_GPU (needs ≥ 13 GB VRAM)", Some(section::SCHEDULING)),
            ("OOM_NO_LARGER_TIER", Some(section::OOM)),
            ("HOST_OOM", Some(section::OOM)),
            ("MAINTENANCE", Some(section::MAINTENANCE)),
            ("IDLE", Some(section::SESSIONS)),
            ("OUTPUT_LIMIT", Some(section::ISOLATION)),
            ("SOMETHING_NEW", None),
        ];
        for (reason, want) in table {
            assert_eq!(reason_section(reason), want, "{reason}");
        }
        assert_eq!(reason_link("HOST_OOM").as_deref(), Some("/policy#oom"));
    }

    #[test]
    fn the_oom_path_climbs_vram_and_skips_inactive_tiers() {
        let tiers = [
            tier("a100", 80, 3, true),
            tier("3080", 12, 1, true),
            tier("4090", 24, 2, true),
            tier("old", 16, 0, false),
            tier("l4", 24, 1, true),
        ];
        let names: Vec<Vec<&str>> =
            oom_path(&tiers).iter().map(|step| step.iter().map(|t| t.name.as_str()).collect()).collect();
        assert_eq!(names, vec![vec!["3080"], vec!["4090", "l4"], vec!["a100"]]);
    }

    #[test]
    fn the_worked_example_follows_the_tier() {
        assert_eq!(worked_example(82.6), (297_360.0, 297_360.0, 49_560.0));
    }
}
