//! The console's backend: [`ConsoleBackend`] on [`AppState`]. The caller
//! was resolved once by the middleware (it rides in [`SignedIn`]); each
//! method parses what the form sent, calls the same service function the
//! REST API uses, so console and API cannot disagree, and maps the error
//! once ([`From<ServiceError>`] below), keeping its api.md code.

use app::msg;
use std::collections::BTreeMap;

use app::api::backend::{ConsoleBackend, SignedIn};
use app::model::admin::{AdminAction, AdminClusterView};
use app::model::error::ConsoleError;
use app::model::views::{
    AdminView, AuditEntryView, DashboardView, JobDetail, JobPage, LogChunk, PersonalToken, QueueView, SubmitForm,
    TokenView, UsagePage, WorkspaceView,
};
use app::model::{JobView, MaintenanceView, Role};

use super::form::{parse_number, refused};
use crate::auth::Caller;
use crate::services::jobs::input::{SubmitBody, ValidSubmit};
use crate::services::jobs::{self, reading, ListQuery};
use crate::services::{account, admin, audit, dashboard, sessions, views, workspaces, ServiceError};
use crate::state::AppState;

/// The one mapping from the services' error: the code kept, internals
/// logged here and never shown.
impl From<ServiceError> for ConsoleError {
    fn from(e: ServiceError) -> Self {
        match e {
            ServiceError::Internal(detail) => {
                tracing::error!(error = %detail, "console request failed");
                ConsoleError::internal()
            }
            other => ConsoleError::new(other.code(), other.text(app::i18n::locale())),
        }
    }
}

/// The server's record of the caller, put there by the middleware.
fn caller(who: &SignedIn) -> &Caller {
    &who.principal
}

fn admin_caller(who: &SignedIn) -> Result<&Caller, ConsoleError> {
    let caller = caller(who);
    if caller.user.role == Role::Admin {
        Ok(caller)
    } else {
        Err(ConsoleError::forbidden())
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
        let (key, value) = line.split_once('=').ok_or_else(|| refused(msg!("err-env-line", line = n + 1)))?;
        env.insert(key.trim().to_string(), value.to_string());
    }
    Ok(env)
}

/// The submit form's text fields as the body /v1/jobs takes.
fn submit_body(form: SubmitForm) -> Result<SubmitBody, ConsoleError> {
    Ok(SubmitBody {
        name: form.name.trim().to_string(),
        command: form.command.replace("\r\n", "\n"),
        num_gpus: parse_number("num_gpus", &form.num_gpus)?.unwrap_or(1),
        workspace: Some(form.workspace.trim().to_string()).filter(|w| !w.is_empty()),
        time_limit_minutes: parse_number("time_limit_minutes", &form.time_limit_minutes)?,
        env: parse_env(&form.env)?,
        min_vram_gb: parse_number("min_vram_gb", &form.min_vram_gb)?,
        dependencies: app::model::views::parse_after(&form.after)
            .map_err(|e| refused(e.on("dependencies")))?
            .into_iter()
            .map(|(kind, job)| serde_json::from_value(serde_json::json!({"type": kind, "job": job})))
            .collect::<Result<_, _>>()
            .map_err(|e| refused(msg!("err-deps-body", why = e.to_string()).on("dependencies")))?,
        array: Some(form.array.trim().to_string()).filter(|a| !a.is_empty()),
    })
}

/// Audit entries the admin page shows.
const ADMIN_PAGE_AUDIT: i64 = 50;

#[async_trait::async_trait]
impl ConsoleBackend for AppState {
    async fn dashboard(&self, who: &SignedIn) -> Result<DashboardView, ConsoleError> {
        Ok(dashboard::dashboard(self, caller(who)).await?)
    }

    async fn maintenance(&self) -> Result<MaintenanceView, ConsoleError> {
        Ok(views::maintenance(self).await?)
    }

    async fn queue(&self, who: &SignedIn) -> Result<QueueView, ConsoleError> {
        // the page shows the head of the queue; do not ship all of it
        Ok(views::queue(self, caller(who), Some(app::model::views::QUEUE_PAGE_ROWS)).await?)
    }

    async fn jobs(
        &self,
        who: &SignedIn,
        state: Option<String>,
        before: Option<i64>,
        array: Option<i64>,
    ) -> Result<JobPage, ConsoleError> {
        let query = ListQuery { state, before, array, limit: Some(25), ..ListQuery::default() };
        Ok(jobs::list(self, caller(who), &query).await?)
    }

    async fn job(&self, who: &SignedIn, id: i64) -> Result<JobDetail, ConsoleError> {
        Ok(reading::detail(self, caller(who), id).await?)
    }

    async fn job_log(&self, who: &SignedIn, id: i64, offset: u64) -> Result<LogChunk, ConsoleError> {
        Ok(reading::log(self, caller(who), id, offset).await?)
    }

    async fn job_log_tail(&self, who: &SignedIn, id: i64, end: Option<u64>) -> Result<LogChunk, ConsoleError> {
        Ok(reading::log_tail(self, caller(who), id, end).await?)
    }

    async fn submit(&self, who: &SignedIn, form: SubmitForm) -> Result<app::model::Submitted, ConsoleError> {
        let valid = ValidSubmit::try_from(submit_body(form)?).map_err(ServiceError::from)?;
        Ok(jobs::submit(self, caller(who), valid).await?)
    }

    async fn cancel(&self, who: &SignedIn, id: i64) -> Result<JobView, ConsoleError> {
        Ok(jobs::cancel(self, caller(who), id).await?)
    }

    fn session_apps(&self) -> Vec<String> {
        self.settings.sessions.apps.keys().cloned().collect()
    }

    async fn start_session(&self, who: &SignedIn, form: app::model::SessionForm) -> Result<JobView, ConsoleError> {
        let body = sessions::StartBody {
            app: form.app.trim().to_string(),
            num_gpus: parse_number("num_gpus", &form.num_gpus)?.unwrap_or(1),
            time_limit_minutes: parse_number("time_limit_minutes", &form.time_limit_minutes)?,
            workspace: Some(form.workspace.trim().to_string()).filter(|w| !w.is_empty()),
            min_vram_gb: None,
        };
        Ok(sessions::start(self, caller(who), body).await?)
    }

    async fn cancel_array(&self, who: &SignedIn, id: i64) -> Result<app::model::ArrayJobs, ConsoleError> {
        Ok(jobs::arrays::cancel(self, caller(who), id).await?)
    }

    async fn workspaces(&self, who: &SignedIn) -> Result<Vec<WorkspaceView>, ConsoleError> {
        Ok(workspaces::own_lab(self, caller(who)).await?)
    }

    async fn usage(&self, who: &SignedIn, lab: Option<String>) -> Result<UsagePage, ConsoleError> {
        Ok(views::usage_page(self, caller(who), lab).await?)
    }

    async fn usage_report(
        &self,
        who: &SignedIn,
        month: Option<String>,
        by: String,
    ) -> Result<app::model::views::UsageReport, ConsoleError> {
        let query = crate::services::reports::month_query(month.as_deref(), &by)?;
        Ok(crate::services::reports::usage(self, caller(who), &query).await?)
    }

    async fn notifications(&self, who: &SignedIn) -> Result<app::model::views::NotificationSettings, ConsoleError> {
        Ok(crate::services::notifications::get(self, caller(who)).await?)
    }

    async fn save_notifications(
        &self,
        who: &SignedIn,
        form: app::model::views::NotificationSettings,
    ) -> Result<app::model::views::NotificationSettings, ConsoleError> {
        let body = crate::services::notifications::SettingsBody {
            email: form.email,
            webhook_url: form.webhook_url,
            events: form.events,
        };
        Ok(crate::services::notifications::put(self, caller(who), body).await?)
    }

    async fn deliveries(&self, who: &SignedIn) -> Result<app::model::views::Deliveries, ConsoleError> {
        Ok(crate::services::notifications::deliveries(self, caller(who)).await?)
    }

    async fn change_password(&self, who: &SignedIn, current: String, new: String) -> Result<(), ConsoleError> {
        let epoch = account::change_password(self, caller(who), &current, &new).await?;
        // this session stays signed in; every other one has ended
        if let Ok(session) = leptos_axum::extract::<tower_sessions::Session>().await {
            session
                .insert(crate::http::middleware::SESSION_EPOCH_KEY, epoch)
                .await
                .map_err(|e| ServiceError::Internal(format!("session: {e}")))?;
        }
        Ok(())
    }

    async fn tokens(&self, who: &SignedIn) -> Result<Vec<TokenView>, ConsoleError> {
        Ok(account::tokens(self, caller(who)).await?)
    }

    async fn storage(&self, who: &SignedIn) -> Result<app::model::storage::StorageView, ConsoleError> {
        Ok(crate::services::storage::my_storage(self, caller(who)).await?)
    }

    async fn create_token(
        &self,
        who: &SignedIn,
        name: String,
        expires_in_days: Option<i64>,
    ) -> Result<PersonalToken, ConsoleError> {
        Ok(account::create_token(self, caller(who), &name, expires_in_days).await?)
    }

    async fn policy(&self, who: Option<&SignedIn>) -> Result<app::model::policy::PolicyView, ConsoleError> {
        let viewer = who.map(caller);
        Ok(crate::services::policy_page::facts(self, viewer).await?)
    }

    fn sign_in_options(&self) -> app::model::views::SignInOptions {
        account::sign_in_options(self)
    }

    async fn revoke_token(&self, who: &SignedIn, id: i64) -> Result<(), ConsoleError> {
        Ok(account::revoke_token(self, caller(who), id).await?)
    }

    async fn executor_problem(&self) -> Option<String> {
        self.executor_health.problem()
    }

    async fn admin_view(&self, who: &SignedIn) -> Result<AdminView, ConsoleError> {
        admin_caller(who)?;
        let maintenance = views::maintenance(self).await?;
        let page = audit::page(self, None, Some(ADMIN_PAGE_AUDIT)).await?;
        let audit = page
            .entries
            .into_iter()
            .map(|e| AuditEntryView {
                at: e.at,
                actor: e.actor,
                action: e.action,
                target: e.target,
                detail: e.detail.to_string(),
            })
            .collect();
        Ok(AdminView { maintenance, audit })
    }

    async fn set_maintenance(
        &self,
        who: &SignedIn,
        action: String,
        message: String,
    ) -> Result<MaintenanceView, ConsoleError> {
        let caller = admin_caller(who)?;
        let action = match action.as_str() {
            "start" => admin::MaintenanceAction::Start { message: Some(message) },
            "end" => admin::MaintenanceAction::End,
            other => return Err(refused(msg!("err-one-of", text = other, options = "start, end").on("action"))),
        };
        Ok(admin::maintenance(self, caller, action).await?)
    }

    async fn admin_cluster(&self, who: &SignedIn) -> Result<AdminClusterView, ConsoleError> {
        admin_caller(who)?;
        super::admin::view(self).await
    }

    async fn admin_action(&self, who: &SignedIn, action: AdminAction) -> Result<String, ConsoleError> {
        super::admin::act(self, admin_caller(who)?, action).await
    }

    async fn folder(
        &self,
        who: &SignedIn,
        place: String,
        path: String,
    ) -> Result<app::model::datasets::FolderListing, ConsoleError> {
        super::data::folder(self, caller(who), &place, &path).await
    }

    async fn datasets_page(&self, who: &SignedIn) -> Result<app::model::datasets::DatasetsView, ConsoleError> {
        super::data::page(self, caller(who)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::model::error::ErrorCode;

    #[test]
    fn env_lines_are_parsed_and_mistakes_named() {
        let env = parse_env("A=1\n\n# note\nB = x=y\n").unwrap();
        assert_eq!(env.get("A").map(String::as_str), Some("1"));
        assert_eq!(env.get("B").map(String::as_str), Some(" x=y"));
        assert!(matches!(parse_env("oops"), Err(e) if e.code == ErrorCode::Validation && e.message.contains("line 1")));
        assert_eq!(parse_number::<i64>("num_gpus", " 2 ").unwrap(), Some(2));
        assert!(parse_number::<i64>("num_gpus", "two").is_err());
    }

    #[test]
    fn service_errors_keep_their_code_and_hide_internals() {
        let limit = ConsoleError::from(ServiceError::QueueLimit(msg!("err-queue-limit-full", unfinished = 3u32)));
        assert_eq!(limit.code, ErrorCode::QueueLimit);
        assert!(limit.message.contains("you already have 3 unfinished jobs"), "{}", limit.message);
        let fit = ConsoleError::from(ServiceError::NoFitPlacement(msg!("err-no-fit", gpus = 9u32, largest = 8u32)));
        assert_eq!(fit.code, ErrorCode::NoFitPlacement);
        let internal = ConsoleError::from(ServiceError::Internal("database: disk I/O error".into()));
        assert_eq!((internal.code, internal.message.as_str()), (ErrorCode::Internal, "internal error"));
    }
}
