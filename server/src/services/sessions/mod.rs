//! Interactive sessions (policy §12, api.md "Interactive sessions"): a
//! job whose script is an app (JupyterLab) the researcher opens through
//! `/s/{id}/`. Starting one is a submit like any other (same queues,
//! limits, isolation and charge) plus the per-user session limit; the
//! command is the server's, never the researcher's. [`app`] reaches the
//! app, [`watch`] marks it READY and ends it when idle; the proxy itself
//! is an adapter (`http::sessions`).

pub mod app;
pub mod watch;

use ::app::msg;
use std::collections::HashMap;
use std::sync::Mutex;

use app::AppAddress;
use serde::Deserialize;

use super::jobs::input::{Command, EnvVars, FieldError, JobName, NumGpus, ValidSubmit, MAX_VRAM_GB};
use crate::auth::Caller;
use crate::config::ExecutorKind;
use crate::db;
use crate::services::{ServiceError, Services};
use ::app::model::{JobState, JobView, Submitted};

/// `POST /v1/sessions`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartBody {
    /// An app of `[sessions.apps]`, e.g. `jupyterlab`.
    pub app: String,
    pub num_gpus: i64,
    pub time_limit_minutes: Option<i64>,
    pub workspace: Option<String>,
    pub min_vram_gb: Option<i64>,
}

/// Starts a session: admitted and queued as a job of kind `session`.
pub async fn start(state: &Services, caller: &Caller, body: StartBody) -> Result<JobView, ServiceError> {
    let settings = &state.settings;
    let Some(app) = settings.sessions.apps.get(&body.app) else {
        let known: Vec<&str> = settings.sessions.apps.keys().map(String::as_str).collect();
        return Err(FieldError {
            field: "app",
            message: msg!("err-one-of", text = &body.app, options = known.join(", ")),
        }
        .into());
    };
    let time_limit_minutes = match body.time_limit_minutes {
        None => None,
        Some(m) if (1..=i64::from(u32::MAX)).contains(&m) => Some(m as u32),
        Some(m) => {
            return Err(
                FieldError { field: "time_limit_minutes", message: msg!("err-at-least", min = 1u32, got = m) }.into()
            )
        }
    };
    let min_vram_gb = match body.min_vram_gb {
        None => 0,
        Some(gb) if (0..=MAX_VRAM_GB).contains(&gb) => gb as u32,
        Some(gb) => {
            return Err(FieldError {
                field: "min_vram_gb",
                message: msg!("err-range", min = 0u32, max = MAX_VRAM_GB, got = gb),
            }
            .into())
        }
    };
    let job = ValidSubmit {
        name: JobName::parse(&format!("{} session", body.app))?,
        command: Command::parse(&launcher(&app.command, settings.executor.kind))?,
        num_gpus: NumGpus::parse(body.num_gpus)?,
        workspace: body.workspace.filter(|w| !w.is_empty()),
        time_limit_minutes,
        env: EnvVars::default(),
        min_vram_gb,
        after: Vec::new(),
        array: None,
        session_app: Some(body.app),
    };
    match super::jobs::submit(state, caller, job).await? {
        Submitted::Job(view) => Ok(*view),
        Submitted::Array(_) => Err(ServiceError::Internal("a session was stored as an array".into())),
    }
}

/// The job's script: the app under `/s/{id}/`, reachable as app.rs says
/// for each executor. `program` is one word from the settings, quoted
/// for the shell. Requests carry the site's own `Host` (Jupyter compares
/// it with `Origin`), so Jupyter's loopback-only Host check is lifted.
///
/// - local: listening only on a Unix socket in the job's own directory
///   (mode 0600), asking no token — so no secret exists that a page
///   could show the browser;
/// - Slurm: on a port of its node, asking a token the job draws itself
///   into a 0600 file (given by file, so Jupyter neither prints it to the
///   log nor shows it in `ps`); Jupyter announces port and token in its
///   runtime directory, where the server reads them.
pub fn launcher(program: &str, executor: ExecutorKind) -> String {
    let quoted = format!("'{}'", program.replace('\'', r"'\''"));
    let common = "--ServerApp.base_url=\"/s/$JOB_ID/\" --ServerApp.root_dir=\"$HOME\" \\\n  \
                  --ServerApp.password= --ServerApp.quit_button=False --ServerApp.allow_remote_access=True";
    match executor {
        ExecutorKind::Slurm => format!(
            "# an interactive session, started by JPU-Share\n\
             cd \"$JOB_OUTPUT_DIR\" || exit 1\n\
             umask 077\n\
             export JUPYTER_RUNTIME_DIR=\"$JOB_OUTPUT_DIR/{runtime}\"\n\
             export JUPYTER_TOKEN_FILE=\"$JUPYTER_RUNTIME_DIR/token\"\n\
             export JUPYTER_CONFIG_DIR=\"$JUPYTER_RUNTIME_DIR\"\n\
             mkdir -p \"$JUPYTER_RUNTIME_DIR\" && rm -f \"$JUPYTER_RUNTIME_DIR\"/jpserver-*.json || exit 1\n\
             head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > \"$JUPYTER_TOKEN_FILE\" || exit 1\n\
             exec {quoted} --no-browser --ServerApp.ip=0.0.0.0 --ServerApp.port=0 --ServerApp.port_retries=0 \\\n  \
               {common}\n",
            runtime = app::RUNTIME_DIR
        ),
        _ => format!(
            "# an interactive session, started by JPU-Share\n\
             cd \"$JOB_OUTPUT_DIR\" || exit 1\n\
             exec {quoted} --no-browser \\\n  \
               --ServerApp.sock=\"$JOB_OUTPUT_DIR/{socket}\" --ServerApp.sock_mode=0600 \\\n  \
               --IdentityProvider.token= {common}\n",
            socket = app::SOCKET
        ),
    }
}

/// Where the proxy sends a request for session `id`: its app, if the
/// caller owns the session and it is READY. Anyone else — another user,
/// a colleague, an admin — learns nothing, not even that it exists (404).
pub async fn target(state: &Services, caller: &Caller, id: i64) -> Result<AppAddress, ServiceError> {
    let missing = || ServiceError::NotFound(msg!("err-no-such-session"));
    let mut conn = state.db.acquire().await?;
    let row = db::sessions::reach(&mut conn, id).await?.ok_or_else(missing)?;
    if row.user_id != caller.user.id {
        return Err(missing());
    }
    match (row.state, row.ready) {
        (JobState::Running, true) => {}
        (JobState::Running | JobState::Dispatching | JobState::UserQueueWait | JobState::GlobalQueueWait, _) => {
            return Err(ServiceError::Conflict(msg!("err-session-not-ready", id = id)))
        }
        _ => return Err(ServiceError::NotFound(msg!("err-session-ended", id = id))),
    }
    let uid = row.uid.ok_or_else(missing)?;
    let layout = crate::executor::layout::Layout::new(&state.settings.executor.output_root);
    Ok(address(&state.settings, &layout, id, uid, row.node_addr.as_deref()))
}

/// Where session `id`'s app listens on this site's executor: a socket
/// in its directory here, or a port on its Slurm node (app.rs says why).
pub fn address(
    settings: &crate::config::Settings,
    layout: &crate::executor::layout::Layout,
    id: i64,
    uid: u32,
    node_addr: Option<&str>,
) -> AppAddress {
    let on_node = node_addr.filter(|_| settings.executor.kind == ExecutorKind::Slurm);
    AppAddress::new(&layout.output_dir(id), uid, on_node)
}

/// When each session last saw traffic through the proxy (ms), kept in
/// memory and written to its job by [`watch`] every few seconds: one
/// write per session per tick, not one per request.
#[derive(Default)]
pub struct Activity {
    seen: Mutex<HashMap<i64, i64>>,
}

impl Activity {
    pub fn touch(&self, id: i64) {
        let now = crate::clock::now_ms();
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).insert(id, now);
    }

    /// What was seen since the last call.
    pub fn take(&self) -> HashMap<i64, i64> {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
