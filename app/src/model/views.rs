//! View structs for the queue, labs, placements, logs and files: what the
//! REST API returns (api.md field names) and the console renders.

use serde::{Deserialize, Serialize};

use crate::model::{JobView, NodeView, ReservationView, TierView};

/// A page of jobs, newest first; `next` is the `before` for the next page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobPage {
    pub jobs: Vec<JobView>,
    pub next: Option<i64>,
    /// The arrays that elements on this page belong to, with all their
    /// elements counted by state (the console shows an array as one row).
    #[serde(default)]
    pub arrays: Vec<ArraySummary>,
}

/// An array and its elements counted by state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ArraySummary {
    pub id: i64,
    /// As submitted, e.g. `0-15%4`.
    pub spec: String,
    pub max_running: Option<u32>,
    pub total: u32,
    /// State name → elements in it.
    pub counts: std::collections::BTreeMap<String, u32>,
}

/// The console's queue page lists this many global-queue rows.
pub const QUEUE_PAGE_ROWS: usize = 200;

/// One waiting job in queue order. Other labs' jobs show their lab and
/// size but not their name or user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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
    /// The forecast's estimate (RFC 3339), null when there is none.
    #[serde(default)]
    pub estimated_start: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct QueueView {
    /// The global queue in this cycle's order.
    pub jobs: Vec<QueueEntry>,
    /// The caller's personal queue (over their concurrency limit).
    pub user_queue: Vec<QueueEntry>,
    /// Set when `jobs` was cut short (the console shows the head of a
    /// long queue): how many jobs wait in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_waiting: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LabView {
    pub name: String,
    /// Decayed to now (policy §2).
    pub usage_tflop_s: f64,
    pub running_gpus: u32,
    pub queued_jobs: u32,
}

/// One day of a lab's charges (not decayed), split by tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UsageDay {
    /// `YYYY-MM-DD`, UTC.
    pub date: String,
    pub usage_tflop_s: f64,
    /// GPU-hours charged that day (run and reservation).
    #[serde(default)]
    pub gpu_hours: f64,
    pub by_tier: Vec<TierUsage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TierUsage {
    pub tier: String,
    /// Run and reservation charges on this tier.
    pub usage_tflop_s: f64,
    /// Of `usage_tflop_s`, reservation time (R4).
    #[serde(default)]
    pub reserved_tflop_s: f64,
    #[serde(default)]
    pub gpu_hours: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LabUsageSeries {
    pub lab: String,
    pub days: Vec<UsageDay>,
}

/// GPU counts of one placement (node × tier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PlacementView {
    pub node: String,
    pub tier: String,
    /// `idle + research + backfill + reserved`: every GPU in one column.
    pub capacity: u32,
    /// Free of everything.
    pub idle: u32,
    /// Running research jobs.
    pub research: u32,
    /// Running LLM backfill (and not reserved): reclaimed when research
    /// needs it, so it counts as idle to the scheduler (policy §1).
    pub backfill: u32,
    /// Held by the rank-1 job's reservation (even if backfill still runs
    /// on it until the job starts).
    pub reserved: u32,
    /// Whether research may start here: the node is up and the tier active.
    pub usable: bool,
    /// GPUs a research job could start on now: `idle + backfill` when
    /// usable, else 0.
    pub available: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BackfillInstanceView {
    pub id: i64,
    pub node: String,
    pub tier: String,
    pub gpu_indices: Vec<u32>,
    pub endpoint: Option<String>,
    pub started_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BackfillView {
    pub enabled: bool,
    pub instances: Vec<BackfillInstanceView>,
    pub served_gpu_hours: f64,
    /// Idle time before a GPU gets an instance.
    #[serde(default)]
    pub min_idle_seconds: u64,
    #[serde(default)]
    pub gpus_per_instance: u32,
    /// The serving command; shown to admins only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// A slice of a job's log: bytes `offset..next_offset`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LogChunk {
    pub offset: u64,
    pub data: String,
    pub next_offset: u64,
    /// The job has ended and everything was read.
    pub eof: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FileEntry {
    /// Relative to the job's output directory, `/`-separated.
    pub path: String,
    pub size: u64,
    pub modified: String,
}

/// The lab usage page: every lab's standing and one lab's last 30 days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UsagePage {
    pub labs: Vec<LabView>,
    /// The viewer's lab.
    pub my_lab: String,
    pub series: LabUsageSeries,
}

/// An API token as its owner sees it (never the token itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TokenView {
    pub id: i64,
    /// What its owner named it; null for one a sign-in issued.
    pub name: Option<String>,
    pub created_at: String,
    pub expires_at: String,
    pub last_used_at: Option<String>,
}

/// What the sign-in page offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignInOptions {
    /// `auth.passwords`: false = only local accounts may use a password.
    pub passwords_for_everyone: bool,
    /// The university sign-in button's words (`auth.oidc.display_name`).
    pub button: String,
    /// Whether sign-in through the university is set up here.
    pub university: bool,
}

/// A personal token just created (api.md "Personal tokens"): the only
/// time its secret is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PersonalToken {
    pub id: i64,
    pub name: String,
    pub token: String,
    pub expires_at: String,
}

/// A token just created: the only time its secret is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NewToken {
    pub token: String,
    pub expires_at: String,
}

/// One admin action from the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AuditEntryView {
    pub at: String,
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    pub detail: String,
}

/// What the admin page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AdminView {
    pub maintenance: crate::model::MaintenanceView,
    pub audit: Vec<AuditEntryView>,
}

/// A job as its detail page shows it: what the viewer may do with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobDetail {
    pub job: JobView,
    /// Owner or admin: may cancel (while it is not over).
    pub can_cancel: bool,
    /// Owner or admin: may read the log and files.
    pub can_read_output: bool,
    /// The first files by path (the console shows a page of them) …
    pub files: Vec<FileEntry>,
    /// … of this many.
    pub files_total: usize,
    /// The most attempts it can have: one, plus one per larger-VRAM tier a
    /// GPU OOM could send it to (policy §6).
    #[serde(default)]
    pub max_attempts: u32,
    /// While it runs: when its time limit ends it at the latest.
    #[serde(default)]
    pub ends_by: Option<String>,
    /// While it runs: whole minutes until `ends_by`.
    #[serde(default)]
    pub minutes_left: Option<i64>,
    /// A READY session the viewer owns: they may open it.
    #[serde(default)]
    pub can_open: bool,
    /// A READY session that ends as idle within
    /// [`IDLE_WARNING_MINUTES`](crate::model::session::IDLE_WARNING_MINUTES)
    /// unless it is used: the minutes left.
    #[serde(default)]
    pub idle_minutes_left: Option<i64>,
}

/// The submit form as typed (validated on the server, errors per field).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SubmitForm {
    pub name: String,
    pub command: String,
    pub num_gpus: String,
    pub time_limit_minutes: String,
    /// `KEY=value` per line.
    pub env: String,
    /// A READY workspace of the lab; empty = none.
    #[serde(default)]
    pub workspace: String,
    /// GB; empty = any tier.
    #[serde(default)]
    pub min_vram_gb: String,
    /// `ok:12,any:13`; empty = none.
    #[serde(default)]
    pub after: String,
    /// `0-15%4`; empty = a single job.
    #[serde(default)]
    pub array: String,
}

/// A lab's workspace: a container image built from `base_image` plus
/// `packages` (with network access), which jobs then run in offline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WorkspaceView {
    pub name: String,
    pub lab: String,
    pub base_image: String,
    pub packages: Vec<String>,
    /// `BUILDING`, `READY` or `FAILED`.
    pub status: String,
    pub created_at: String,
    /// The build's output so far (its last 64 KiB); only in the answer
    /// for one workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_log: Option<String>,
}

/// What the dashboard shows on first render.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DashboardView {
    pub tiers: Vec<TierView>,
    pub nodes: Vec<NodeView>,
    /// The viewer's jobs that are not over yet.
    #[serde(default)]
    pub my_jobs: Vec<JobView>,
    /// Every lab's standing (decayed usage, running GPUs, queued jobs).
    #[serde(default)]
    pub labs: Vec<LabView>,
}

/// `ok:12,any:13,notok:14` (the CLI's `--after` and the submit form) as
/// api.md's `(type, job)` pairs: `afterok`, `afterany`, `afternotok`.
#[cfg(feature = "ssr")]
pub fn parse_after(text: &str) -> Result<Vec<(&'static str, i64)>, crate::i18n::Msg> {
    use crate::msg;
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, id) = part.split_once(':').ok_or_else(|| msg!("err-after-form", part = part))?;
        let kind = match kind.trim().trim_start_matches("after") {
            "ok" => "afterok",
            "any" => "afterany",
            "notok" => "afternotok",
            other => return Err(msg!("err-one-of", text = other, options = "ok, any, notok")),
        };
        let id = id.trim().trim_start_matches('#').parse::<i64>().map_err(|_| msg!("err-not-job-id", text = id))?;
        out.push((kind, id));
    }
    Ok(out)
}

#[cfg(all(test, feature = "ssr"))]
mod after_tests {
    use super::parse_after;

    #[test]
    fn after_lists_in_short_and_long_form() {
        assert_eq!(
            parse_after("ok:12, any:13,afternotok:#14").unwrap(),
            vec![("afterok", 12), ("afterany", 13), ("afternotok", 14)]
        );
        assert_eq!(parse_after("").unwrap(), vec![]);
        assert!(parse_after("12").unwrap_err().to_string().contains("KIND:JOB"));
        assert!(parse_after("maybe:12").unwrap_err().to_string().contains("is not one of ok, any, notok"));
        assert!(parse_after("ok:x").unwrap_err().to_string().contains("not a job id"));
    }
}

/// `GET /v1/reports/usage`: raw usage from the charge ledger, summed by
/// lab, user, tier or month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UsageReport {
    /// First day, `YYYY-MM-DD` (UTC).
    pub from: String,
    /// Last day, included.
    pub to: String,
    /// `lab`, `user`, `tier` or `month`.
    pub by: String,
    pub rows: Vec<UsageReportRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UsageReportRow {
    pub group: String,
    /// Jobs charged in the window.
    pub jobs: i64,
    pub gpu_hours: f64,
    pub tflop_s: f64,
}

/// A user's notification settings (`GET`/`PUT /v1/me/notifications`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NotificationSettings {
    pub email: Option<String>,
    pub webhook_url: Option<String>,
    /// Of `started`, `ended`, `retried`.
    pub events: Vec<String>,
    /// The webhook's signing secret: only in the answer to the `PUT` that
    /// set a new webhook URL (keep it; it is not shown again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// One notification and how its delivery went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DeliveryView {
    /// Also the `X-JPU-Delivery` header (the same on every try).
    pub id: i64,
    /// The job it is about; null for a data request's.
    pub job: Option<i64>,
    /// The data request it is about (event `data_request`).
    pub data_request: Option<i64>,
    /// `started`, `ended`, `retried` or `data_request`.
    pub event: String,
    /// `email` or `webhook`.
    pub channel: String,
    pub target: String,
    /// `PENDING`, `SENDING`, `DELIVERED` or `FAILED` (given up).
    pub state: String,
    pub attempts: u32,
    pub created_at: String,
    /// When it is tried next (pending ones).
    pub next_attempt_at: Option<String>,
    pub delivered_at: Option<String>,
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Deliveries {
    pub deliveries: Vec<DeliveryView>,
}
