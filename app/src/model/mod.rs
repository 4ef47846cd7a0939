//! Types shared by the console, the REST API and the scheduler: job
//! states, roles, phases and jobs here; page views in [`views`], the admin
//! pages' in [`admin`], api.md's error codes in [`error`]. Their string
//! forms are the names in the policy and api.md and must not change.

pub mod admin;
pub mod datasets;
pub mod error;
pub mod log_text;
pub mod policy;
pub mod reasons;
pub mod session;
pub mod storage;
pub mod views;

pub use session::{JobKind, SessionForm, SessionState, SessionView};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Parsing a state/role/phase name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{value}`")]
pub struct UnknownName {
    pub kind: &'static str,
    pub value: String,
}

macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident, $kind:literal { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        // by hand: the derive does not see renames made inside a macro
        #[cfg(feature = "ssr")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some(concat!("A ", $kind, ".")))
                    .enum_values(Some([$($text),+]))
                    .into()
            }
        }

        #[cfg(feature = "ssr")]
        impl utoipa::ToSchema for $name {}

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(UnknownName { kind: $kind, value: other.to_string() }),
                }
            }
        }
    };
}

named_enum!(
    /// Job lifecycle (policy §3).
    JobState, "job state" {
        UserQueueWait => "USER_QUEUE_WAIT",
        GlobalQueueWait => "GLOBAL_QUEUE_WAIT",
        Dispatching => "DISPATCHING",
        Running => "RUNNING",
        Cancelling => "CANCELLING",
        Completed => "COMPLETED",
        Failed => "FAILED",
        Cancelled => "CANCELLED",
    }
);

impl JobState {
    /// Terminal states free the concurrency slot and never change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, JobState::Completed | JobState::Failed | JobState::Cancelled)
    }

    /// States that hold one of the user's concurrency slots (policy §3).
    pub fn holds_slot(self) -> bool {
        matches!(self, JobState::GlobalQueueWait | JobState::Dispatching | JobState::Running | JobState::Cancelling)
    }
}

named_enum!(
    /// Who a user is to the system.
    Role, "role" {
        Researcher => "researcher",
        Admin => "admin",
    }
);

named_enum!(
    /// How a user signs in (api.md `GET /v1/me` `auth`).
    SignIn, "sign-in kind" {
        Password => "password",
        Oidc => "oidc",
    }
);

named_enum!(
    /// Maintenance phases (policy §10).
    MaintenancePhase, "maintenance phase" {
        Normal => "NORMAL",
        Draining => "DRAINING",
        BackfillRecovery => "BACKFILL_RECOVERY",
        Active => "ACTIVE",
    }
);

named_enum!(
    /// State of a node: `DRAINED` is a draining node with nothing left
    /// running on it (shown, never stored).
    NodeState, "node state" {
        Up => "UP",
        Draining => "DRAINING",
        Drained => "DRAINED",
        Down => "DOWN",
    }
);

/// The signed-in user, as the console and `GET /v1/me` show them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Viewer {
    pub username: String,
    pub lab: String,
    pub role: Role,
    pub max_concurrent: i64,
    /// The uid this user's jobs run as: set by an admin (or the
    /// directory), else handed out by the local executor; null until then.
    pub unix_uid: Option<i64>,
    /// The primary group jobs run with, when the directory gives one.
    pub unix_gid: Option<i64>,
    pub auth: SignIn,
}

impl Viewer {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct MaintenanceView {
    pub phase: MaintenancePhase,
    pub message: Option<String>,
    /// RFC 3339, UTC.
    pub since: String,
}

/// A GPU model class (policy §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TierView {
    pub name: String,
    pub display_name: String,
    pub vram_gb: i64,
    pub tflops: f64,
    pub sort_order: i64,
    pub max_gpus: i64,
    pub max_time_limit_minutes: i64,
    pub slurm_partition: String,
    pub cpus_per_gpu: i64,
    pub mem_gb_per_gpu: i64,
    pub active: bool,
}

named_enum!(
    /// What a GPU is doing right now (the dashboard's colours, with text).
    GpuUse, "GPU use" {
        Idle => "idle",
        Research => "research",
        Backfill => "backfill",
        Reserved => "reserved",
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GpuView {
    pub tier: String,
    pub index: i64,
    #[serde(default = "idle")]
    pub used_by: GpuUse,
}

fn idle() -> GpuUse {
    GpuUse::Idle
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NodeView {
    pub name: String,
    pub state: NodeState,
    pub gpus: Vec<GpuView>,
}

/// A job's live reservation (api.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReservationView {
    pub node: String,
    pub tier: String,
    pub gpus: u32,
    pub gpu_seconds: f64,
}

/// One attempt of a job (policy §6: every attempt is kept and shown).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AttemptView {
    pub attempt: u32,
    pub tier: String,
    pub node: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub exit_code: Option<i64>,
    pub reason: Option<String>,
    /// Run and reservation time together (charged at the end, R4).
    pub usage_tflop_s: f64,
    /// Of `usage_tflop_s`, what its reservation held before it ran
    /// (booked on the reservation's tier, which after a swap is not `tier`).
    #[serde(default)]
    pub reserved_usage_tflop_s: f64,
}

/// The job object of api.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct JobView {
    pub id: i64,
    pub name: String,
    pub user: String,
    pub lab: String,
    pub state: JobState,
    pub num_gpus: u32,
    pub attempt: u32,
    pub rank: Option<u32>,
    pub pending_reason: Option<String>,
    pub tier: Option<String>,
    pub node: Option<String>,
    pub gpu_indices: Vec<u32>,
    pub submitted_at: String,
    pub queue_entered_at: Option<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub exit_code: Option<i64>,
    pub end_reason: Option<String>,
    pub usage_tflop_s: f64,
    pub reservation: Option<ReservationView>,
    pub attempts: Vec<AttemptView>,
    pub time_limit_minutes: u32,
    /// The last executor error, e.g. a refused dispatch (the job stays queued).
    pub last_error: Option<String>,
    /// Cancelled, but the executor never confirmed the end (policy §8):
    /// its processes may still run; its node was drained for an admin.
    #[serde(default)]
    pub kill_unconfirmed: bool,
    /// When a waiting job is expected to start (RFC 3339), from the
    /// scheduler's forecast: an estimate, null when there is none.
    #[serde(default)]
    pub estimated_start: Option<String>,
    /// What it waits for: jobs of its lab, each with how it stands now.
    #[serde(default)]
    pub dependencies: Vec<DependencyView>,
    /// The array it is an element of.
    #[serde(default)]
    pub array: Option<ArrayRef>,
    /// `batch`, or `session` for an interactive session (policy §12).
    #[serde(default)]
    pub kind: JobKind,
    /// A session's app and how far it is (sessions only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionView>,
}

/// One dependency of a job (api.md), with the depended-on job's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DependencyView {
    /// `afterok`, `afterany` or `afternotok`.
    #[serde(rename = "type")]
    pub kind: String,
    pub job: i64,
    pub state: JobState,
}

/// An array element's place: `{"id", "index"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ArrayRef {
    pub id: i64,
    pub index: u32,
}

/// What a submit answers: the job, or for an array the array and its
/// elements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum Submitted {
    Array(ArrayJobs),
    Job(Box<JobView>),
}

/// The answer to an array submit or cancel: the array and its elements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ArrayJobs {
    pub array_id: i64,
    pub jobs: Vec<JobView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_their_policy_spelling() {
        for s in JobState::ALL {
            assert_eq!(s.as_str().parse::<JobState>().unwrap(), *s);
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{}\"", s.as_str()));
        }
        assert_eq!("BACKFILL_RECOVERY".parse::<MaintenancePhase>().unwrap(), MaintenancePhase::BackfillRecovery);
        assert!("running".parse::<JobState>().is_err());
    }

    #[test]
    fn slot_holding_follows_policy_table() {
        use JobState::*;
        let holding: Vec<_> = JobState::ALL.iter().copied().filter(|s| s.holds_slot()).collect();
        assert_eq!(holding, vec![GlobalQueueWait, Dispatching, Running, Cancelling]);
        assert!(!UserQueueWait.holds_slot() && !UserQueueWait.is_terminal());
        assert!(Completed.is_terminal() && Failed.is_terminal() && Cancelled.is_terminal());
    }
}

/// Characters left as they are in a URL path segment or an RFC 5987
/// value: letters, digits and `-._~` (RFC 3986 unreserved).
const UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The download URL of a job's output file: each path segment encoded, so
/// a file the job named `a#b`, `x?y` or `%2e%2e` is the file it names.
pub fn file_url(job: i64, path: &str) -> String {
    let segments: Vec<String> =
        path.split('/').map(|s| percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()).collect();
    format!("/v1/jobs/{job}/files/{}", segments.join("/"))
}

/// `Content-Disposition` for a download (RFC 6266): an ASCII `filename`
/// for old clients (anything else becomes `_`) and the exact name as
/// UTF-8 in `filename*` (RFC 5987), so no name — newline, quote or Hangul —
/// can break the header or be shown wrong.
pub fn content_disposition(name: &str) -> String {
    let plain: String =
        name.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '_' }).collect();
    format!(
        "attachment; filename=\"{plain}\"; filename*=UTF-8''{}",
        percent_encoding::utf8_percent_encode(name, UNRESERVED)
    )
}

#[cfg(test)]
mod download_tests {
    use super::*;

    #[test]
    fn download_links_encode_each_segment() {
        assert_eq!(file_url(7, "out/a b#1?.txt"), "/v1/jobs/7/files/out/a%20b%231%3F.txt");
        assert_eq!(file_url(7, "%2e%2e/x"), "/v1/jobs/7/files/%252e%252e/x");
        assert_eq!(file_url(7, "결과.csv"), "/v1/jobs/7/files/%EA%B2%B0%EA%B3%BC.csv");
    }

    #[test]
    fn any_name_makes_a_valid_header() {
        assert_eq!(content_disposition("model.pt"), "attachment; filename=\"model.pt\"; filename*=UTF-8''model.pt");
        assert_eq!(
            content_disposition("결과.csv"),
            "attachment; filename=\"__.csv\"; filename*=UTF-8''%EA%B2%B0%EA%B3%BC.csv"
        );
        let evil = content_disposition("a\"b\nc.txt");
        assert!(!evil.contains('\n') && evil.contains("filename=\"a_b_c.txt\""), "{evil}");
    }
}
