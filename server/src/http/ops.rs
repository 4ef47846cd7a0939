//! Operational endpoints: health and Prometheus metrics.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

use crate::state::AppState;

/// 200 when the database answers (503 otherwise), anonymous. An
/// executor that cannot be reached (Slurm down) makes it `degraded` but
/// still 200: the console and API work and queued jobs stay queued.
pub async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let kind = match state.settings.executor.kind {
        crate::config::ExecutorKind::Local => "local",
        crate::config::ExecutorKind::Slurm => "slurm",
    };
    let executor = match state.executor_health.problem() {
        None => json!({"kind": kind, "state": "ok"}),
        Some(problem) => json!({"kind": kind, "state": "unavailable", "message": problem}),
    };
    let status = if executor["state"] == "ok" { "ok" } else { "degraded" };
    match sqlx::query_scalar!("SELECT 1 AS one").fetch_one(&state.db).await {
        Ok(_) => (StatusCode::OK, Json(json!({"status": status, "database": "ok", "executor": executor}))),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "unavailable", "database": "unreachable"})))
        }
    }
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    state.metrics.run_upkeep();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render())
}
