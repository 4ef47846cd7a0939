//! View structs for the queue, labs, placements, logs and files: what the
//! REST API returns (api.md field names) and the console renders.

use serde::{Deserialize, Serialize};

use crate::model::{JobView, ReservationView};

/// A page of jobs, newest first; `next` is the `before` for the next page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPage {
    pub jobs: Vec<JobView>,
    pub next: Option<i64>,
}

/// One waiting job in queue order. Other labs' jobs show their lab and
/// size but not their name or user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub rank: Option<u32>,
    pub id: i64,
    pub name: Option<String>,
    pub user: Option<String>,
    pub lab: String,
    pub num_gpus: u32,
    pub lab_usage_tflop_s: f64,
    pub queue_entered_at: Option<String>,
    pub pending_reason: Option<String>,
    pub reservation: Option<ReservationView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueView {
    /// The global queue in this cycle's order.
    pub jobs: Vec<QueueEntry>,
    /// The caller's personal queue (over their concurrency limit).
    pub user_queue: Vec<QueueEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabView {
    pub name: String,
    /// Decayed to now (policy §2).
    pub usage_tflop_s: f64,
    pub running_gpus: u32,
    pub queued_jobs: u32,
}

/// One day of a lab's charges (not decayed), split by tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageDay {
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
    pub usage_tflop_s: f64,
    pub by_tier: Vec<TierUsage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierUsage {
    pub tier: String,
    pub usage_tflop_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabUsageSeries {
    pub lab: String,
    pub days: Vec<UsageDay>,
}

/// GPU counts of one placement (node × tier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementView {
    pub node: String,
    pub tier: String,
    pub capacity: u32,
    pub idle: u32,
    pub research: u32,
    pub backfill: u32,
    pub reserved: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackfillInstanceView {
    pub id: i64,
    pub node: String,
    pub tier: String,
    pub gpu_indices: Vec<u32>,
    pub endpoint: Option<String>,
    pub started_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackfillView {
    pub enabled: bool,
    pub instances: Vec<BackfillInstanceView>,
    pub served_gpu_hours: f64,
}

/// A slice of a job's log: bytes `offset..next_offset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogChunk {
    pub offset: u64,
    pub data: String,
    pub next_offset: u64,
    /// The job has ended and everything was read.
    pub eof: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the job's output directory, `/`-separated.
    pub path: String,
    pub size: u64,
    pub modified: String,
}
