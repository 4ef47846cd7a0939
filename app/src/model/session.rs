//! Interactive sessions as the API and the console show them (api.md
//! "Interactive sessions", policy §12): a job of kind `session`, with
//! where its app stands.

use serde::{Deserialize, Serialize};

/// What a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    /// A script submitted to run to its end.
    #[default]
    Batch,
    /// An app (JupyterLab) the researcher opens through the site.
    Session,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Batch => "batch",
            JobKind::Session => "session",
        }
    }
}

/// Where a session's app stands: `WAITING` in the queues, `STARTING`
/// once its job runs and until the app answers, `READY` (its `url`
/// works), `ENDED` with its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionState {
    Waiting,
    Starting,
    Ready,
    Ended,
}

/// A session job's `session` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SessionView {
    /// The app's name in the settings (`jupyterlab`).
    pub app: String,
    pub state: SessionState,
    /// `/s/{id}/`: opens the app once `READY`, for its owner only.
    pub url: String,
    /// Since when nobody used it (RFC 3339), while `READY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_since: Option<String>,
    /// When it ends if nobody uses it before (RFC 3339), while `READY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ends_at: Option<String>,
}

/// The "Start a notebook" form as typed (validated on the server).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionForm {
    pub app: String,
    pub num_gpus: String,
    pub time_limit_minutes: String,
    pub workspace: String,
}

/// How long before an idle end the session's page warns (policy §12).
pub const IDLE_WARNING_MINUTES: i64 = 10;
