//! `AppState`: what every handler and server function shares (the
//! console's backend is implemented on it in `console_backend`).

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::SqlitePool;

use crate::auth::LoginThrottle;
use crate::clock::rfc3339;
use crate::config::Settings;
use crate::db;
use app::model::MaintenanceView;

#[derive(Clone)]
pub struct AppState {
    pub db: SqlitePool,
    pub settings: Arc<Settings>,
    pub throttle: Arc<LoginThrottle>,
    pub leptos: LeptosOptions,
    pub metrics: PrometheusHandle,
    /// Wakes the scheduler loop at once (submit, cancel, admin change).
    pub wake: Arc<tokio::sync::Notify>,
    /// Set by the scheduler loop when the executor cannot be reached.
    pub executor_health: crate::scheduler::runner::ExecutorHealth,
    /// The queue views' shared read of the waiting jobs.
    pub queue_cache: Arc<crate::views::QueueCache>,
    /// LLM backfill's settings in force (file + admin changes).
    pub backfill: crate::admin_backfill::BackfillControl,
    /// Submits waiting to be written together.
    pub submits: Arc<crate::jobs::submit_batch::SubmitBatcher>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}

impl AppState {
    pub fn wake_scheduler(&self) {
        self.wake.notify_one();
    }

    pub async fn maintenance_view(&self) -> Result<MaintenanceView, sqlx::Error> {
        let row = db::maintenance::get(&mut *self.db.acquire().await?).await?;
        Ok(MaintenanceView { phase: row.phase, message: row.message, since: rfc3339(row.since_ms) })
    }
}
