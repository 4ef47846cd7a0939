//! The console's backend: [`ConsoleBackend`] on [`AppState`]. Each method
//! resolves the viewer to a caller and calls the same service function the
//! REST API uses, so console and API cannot disagree.

use std::collections::BTreeMap;

use app::backend::{ConsoleBackend, ConsoleError};
use app::model::{DashboardView, JobView, MaintenanceView, Role, Viewer};
use app::views::{
    AdminView, AuditEntryView, JobDetail, JobPage, LogChunk, NewToken, QueueView, SubmitForm, TokenView, UsagePage,
};

use crate::account::{self, AccountError};
use crate::admin;
use crate::auth::Caller;
use crate::db;
use crate::executor::layout::Layout;
use crate::jobs::{self, input::SubmitBody, input::ValidSubmit, output, JobsError, ListQuery};
use crate::state::AppState;

pub(crate) fn internal(e: impl std::fmt::Display) -> ConsoleError {
    tracing::error!(error = %e, "console request failed");
    ConsoleError::Internal
}

fn from_jobs(e: JobsError) -> ConsoleError {
    match e {
        JobsError::NotFound | JobsError::FileNotFound => ConsoleError::NotFound,
        JobsError::Forbidden(m) | JobsError::Conflict(m) => ConsoleError::Invalid(m),
        JobsError::Field(f) => ConsoleError::Invalid(f.to_string()),
        JobsError::Admission(a) => ConsoleError::Invalid(a.to_string()),
        other => internal(other),
    }
}

fn from_account(e: AccountError) -> ConsoleError {
    match e {
        AccountError::Db(e) => internal(e),
        AccountError::Auth(e) => match e {
            crate::auth::AuthError::Throttled(_) => ConsoleError::Invalid(e.to_string()),
            other => internal(other),
        },
        other => ConsoleError::Invalid(other.to_string()),
    }
}

/// Files the console's job page lists (the rest: `GET /v1/jobs/{id}/files`).
const CONSOLE_FILES: usize = 100;

impl AppState {
    async fn caller(&self, viewer: &Viewer) -> Result<Caller, ConsoleError> {
        let mut conn = self.db.acquire().await.map_err(internal)?;
        let user = db::accounts::user_by_username(&mut conn, &viewer.username)
            .await
            .map_err(internal)?
            .ok_or(ConsoleError::Unauthenticated)?;
        Ok(Caller { user, token_id: None })
    }

    async fn admin(&self, viewer: &Viewer) -> Result<Caller, ConsoleError> {
        let caller = self.caller(viewer).await?;
        if caller.user.role == Role::Admin {
            Ok(caller)
        } else {
            Err(ConsoleError::Forbidden)
        }
    }

    fn layout(&self) -> Layout {
        Layout::new(&self.settings.executor.output_root)
    }
}

/// `KEY=value` lines (blank lines and `#` comments skipped).
fn parse_env(text: &str) -> Result<BTreeMap<String, String>, ConsoleError> {
    let mut env = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| ConsoleError::Invalid(format!("env line {}: write KEY=value", n + 1)))?;
        env.insert(key.trim().to_string(), value.to_string());
    }
    Ok(env)
}

/// A number from a form field; blank = None.
pub(crate) fn parse_number<T: std::str::FromStr>(field: &str, text: &str) -> Result<Option<T>, ConsoleError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| ConsoleError::Invalid(format!("{field}: `{text}` is not a number")))
}

/// An admin service's refusal as the console shows it.
pub(crate) fn from_admin(e: admin::AdminError) -> ConsoleError {
    match e {
        admin::AdminError::Db(e) => internal(e),
        admin::AdminError::Internal(e) => internal(e),
        other => ConsoleError::Invalid(other.to_string()),
    }
}

#[async_trait::async_trait]
impl ConsoleBackend for AppState {
    async fn dashboard(&self, viewer: &Viewer) -> Result<DashboardView, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let mut conn = self.db.acquire().await.map_err(internal)?;
        let tiers = db::cluster::list_tiers(&mut conn).await.map_err(internal)?;
        let mut nodes = db::cluster::list_nodes(&mut conn).await.map_err(internal)?;
        let uses = db::views::gpu_uses(&mut conn).await.map_err(internal)?;
        for node in &mut nodes {
            for gpu in &mut node.gpus {
                if let Some(used) = uses.get(&(node.name.clone(), gpu.tier.clone(), gpu.index as u32)) {
                    gpu.used_by = *used;
                }
            }
        }
        let labs = db::views::labs(&mut conn, crate::clock::now_ms()).await.map_err(internal)?;
        drop(conn);
        let open = "USER_QUEUE_WAIT,GLOBAL_QUEUE_WAIT,DISPATCHING,RUNNING,CANCELLING".to_string();
        let query = ListQuery {
            state: Some(open),
            user: Some(caller.user.username.clone()),
            limit: Some(50),
            ..ListQuery::default()
        };
        let my_jobs = jobs::list(self, &caller, &query).await.map_err(from_jobs)?.jobs;
        Ok(DashboardView { tiers, nodes, my_jobs, labs })
    }

    async fn maintenance(&self) -> Result<MaintenanceView, ConsoleError> {
        self.maintenance_view().await.map_err(internal)
    }

    async fn queue(&self, viewer: &Viewer) -> Result<QueueView, ConsoleError> {
        let caller = self.caller(viewer).await?;
        // the page shows the head of the queue; do not ship all of it
        crate::views::queue(self, &caller, Some(app::views::QUEUE_PAGE_ROWS)).await.map_err(internal)
    }

    async fn jobs(&self, viewer: &Viewer, state: Option<String>, before: Option<i64>) -> Result<JobPage, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let query = ListQuery { state, before, limit: Some(25), ..ListQuery::default() };
        jobs::list(self, &caller, &query).await.map_err(from_jobs)
    }

    async fn job(&self, viewer: &Viewer, id: i64) -> Result<JobDetail, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let job = jobs::get(self, &caller, id).await.map_err(from_jobs)?;
        let mine = caller.user.role == Role::Admin || caller.user.username == job.user;
        let files = if mine {
            // a walk of the job's files: never on an async worker
            let layout = self.layout();
            // the first page only: the page refreshes while it is open
            tokio::task::spawn_blocking(move || output::list_files_page(&layout, id, None, CONSOLE_FILES))
                .await
                .map_err(|e| {
                    tracing::error!(error = %e, "listing a job's files");
                    ConsoleError::Internal
                })?
                .map_err(from_jobs)?
        } else {
            (Vec::new(), 0)
        };
        let (files, files_total) = files;
        Ok(JobDetail { can_cancel: mine && !job.state.is_terminal(), can_read_output: mine, job, files, files_total })
    }

    async fn job_log(&self, viewer: &Viewer, id: i64, offset: u64) -> Result<LogChunk, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let job = jobs::get(self, &caller, id).await.map_err(from_jobs)?;
        output::check_owner(&caller, &job).map_err(from_jobs)?;
        output::read_log(&self.layout(), &job, offset).map_err(from_jobs)
    }

    async fn job_log_tail(&self, viewer: &Viewer, id: i64, end: Option<u64>) -> Result<LogChunk, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let job = jobs::get(self, &caller, id).await.map_err(from_jobs)?;
        output::check_owner(&caller, &job).map_err(from_jobs)?;
        output::read_log_tail(&self.layout(), &job, end).map_err(from_jobs)
    }

    async fn submit(&self, viewer: &Viewer, form: SubmitForm) -> Result<JobView, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let body = SubmitBody {
            name: form.name.trim().to_string(),
            command: form.command.replace("\r\n", "\n"),
            num_gpus: parse_number("num_gpus", &form.num_gpus)?.unwrap_or(1),
            workspace: Some(form.workspace.trim().to_string()).filter(|w| !w.is_empty()),
            time_limit_minutes: parse_number("time_limit_minutes", &form.time_limit_minutes)?,
            env: parse_env(&form.env)?,
        };
        let valid = ValidSubmit::try_from(body).map_err(|f| ConsoleError::Invalid(f.to_string()))?;
        jobs::submit(self, &caller, valid).await.map_err(from_jobs)
    }

    async fn cancel(&self, viewer: &Viewer, id: i64) -> Result<JobView, ConsoleError> {
        let caller = self.caller(viewer).await?;
        jobs::cancel(self, &caller, id).await.map_err(from_jobs)
    }

    async fn workspaces(&self, viewer: &Viewer) -> Result<Vec<app::views::WorkspaceView>, ConsoleError> {
        let caller = self.caller(viewer).await?;
        // the lab's own, also for admins: a job runs in its own lab's workspace
        let rows = db::workspaces::list(&mut *self.db.acquire().await.map_err(internal)?, Some(&caller.user.lab))
            .await
            .map_err(internal)?;
        Ok(rows.into_iter().map(crate::workspaces::view_of).collect())
    }

    async fn usage(&self, viewer: &Viewer, lab: Option<String>) -> Result<UsagePage, ConsoleError> {
        let caller = self.caller(viewer).await?;
        let labs = crate::views::labs(self).await.map_err(internal)?;
        let lab = lab.filter(|l| !l.is_empty()).unwrap_or_else(|| caller.user.lab.clone());
        let series = crate::views::lab_usage(self, &lab, Some(30)).await.map_err(|e| match e {
            crate::views::ViewError::NoSuchLab => ConsoleError::Invalid(format!("no lab named `{lab}`")),
            other => internal(other),
        })?;
        Ok(UsagePage { labs, my_lab: caller.user.lab, series })
    }

    async fn change_password(&self, viewer: &Viewer, current: String, new: String) -> Result<(), ConsoleError> {
        let caller = self.caller(viewer).await?;
        let epoch = account::change_password(self, &caller, &current, &new).await.map_err(from_account)?;
        // this session stays signed in; every other one has ended
        if let Ok(session) = leptos_axum::extract::<tower_sessions::Session>().await {
            session.insert(crate::http::middleware::SESSION_EPOCH_KEY, epoch).await.map_err(internal)?;
        }
        Ok(())
    }

    async fn tokens(&self, viewer: &Viewer) -> Result<Vec<TokenView>, ConsoleError> {
        let caller = self.caller(viewer).await?;
        account::tokens(self, &caller).await.map_err(from_account)
    }

    async fn create_token(&self, viewer: &Viewer, label: String) -> Result<NewToken, ConsoleError> {
        let caller = self.caller(viewer).await?;
        account::create_token(self, &caller, &label).await.map_err(from_account)
    }

    async fn revoke_token(&self, viewer: &Viewer, id: i64) -> Result<(), ConsoleError> {
        let caller = self.caller(viewer).await?;
        account::revoke_token(self, &caller, id).await.map_err(from_account)
    }

    async fn executor_problem(&self) -> Option<String> {
        self.executor_health.problem()
    }

    async fn admin_view(&self, viewer: &Viewer) -> Result<AdminView, ConsoleError> {
        self.admin(viewer).await?;
        let maintenance = self.maintenance_view().await.map_err(internal)?;
        let rows =
            db::audit::list(&mut *self.db.acquire().await.map_err(internal)?, i64::MAX, 50).await.map_err(internal)?;
        let audit = rows
            .into_iter()
            .map(|r| AuditEntryView {
                at: crate::clock::rfc3339(r.at_ms),
                actor: r.actor,
                action: r.action,
                target: r.target,
                detail: r.detail,
            })
            .collect();
        Ok(AdminView { maintenance, audit })
    }

    async fn set_maintenance(
        &self,
        viewer: &Viewer,
        action: String,
        message: String,
    ) -> Result<MaintenanceView, ConsoleError> {
        let caller = self.admin(viewer).await?;
        let action = match action.as_str() {
            "start" => admin::MaintenanceAction::Start { message: Some(message) },
            "end" => admin::MaintenanceAction::End,
            other => return Err(ConsoleError::Invalid(format!("unknown action `{other}`"))),
        };
        admin::maintenance(self, &caller, action).await.map_err(from_admin)
    }

    async fn admin_cluster(&self, viewer: &Viewer) -> Result<app::admin_views::AdminClusterView, ConsoleError> {
        self.admin(viewer).await?;
        crate::console_admin::view(self).await
    }

    async fn admin_action(
        &self,
        viewer: &Viewer,
        action: app::admin_views::AdminAction,
    ) -> Result<String, ConsoleError> {
        let caller = self.admin(viewer).await?;
        crate::console_admin::act(self, &caller, action).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_lines_are_parsed_and_mistakes_named() {
        let env = parse_env("A=1\n\n# note\nB = x=y\n").unwrap();
        assert_eq!(env.get("A").map(String::as_str), Some("1"));
        assert_eq!(env.get("B").map(String::as_str), Some(" x=y"));
        assert!(matches!(parse_env("oops"), Err(ConsoleError::Invalid(m)) if m.contains("line 1")));
        assert_eq!(parse_number::<i64>("num_gpus", " 2 ").unwrap(), Some(2));
        assert!(parse_number::<i64>("num_gpus", "two").is_err());
    }
}
