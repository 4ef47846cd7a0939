//! `AppState`: what every handler, server function and (later) the
//! scheduler loop share. It is also the console's backend.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::prelude::LeptosOptions;
use metrics_exporter_prometheus::PrometheusHandle;
use sqlx::SqlitePool;

use crate::auth::LoginThrottle;
use crate::clock::rfc3339;
use crate::config::Settings;
use crate::db;
use app::backend::{ConsoleBackend, ConsoleError};
use app::model::{DashboardView, MaintenanceView, Viewer};

#[derive(Clone)]
pub struct AppState {
    pub db: SqlitePool,
    pub settings: Arc<Settings>,
    pub throttle: Arc<LoginThrottle>,
    pub leptos: LeptosOptions,
    pub metrics: PrometheusHandle,
    /// Wakes the scheduler loop at once (submit, cancel, admin change).
    pub wake: Arc<tokio::sync::Notify>,
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

fn internal(e: sqlx::Error) -> ConsoleError {
    tracing::error!(error = %e, "console query failed");
    ConsoleError::Internal
}

#[async_trait::async_trait]
impl ConsoleBackend for AppState {
    async fn dashboard(&self, _viewer: &Viewer) -> Result<DashboardView, ConsoleError> {
        let mut conn = self.db.acquire().await.map_err(internal)?;
        let tiers = db::cluster::list_tiers(&mut conn).await.map_err(internal)?;
        let nodes = db::cluster::list_nodes(&mut conn).await.map_err(internal)?;
        Ok(DashboardView { tiers, nodes })
    }

    async fn maintenance(&self) -> Result<MaintenanceView, ConsoleError> {
        self.maintenance_view().await.map_err(internal)
    }
}
