//! Operational endpoints: health and Prometheus metrics.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

use crate::state::AppState;

/// The longest `/healthz` waits on the OpenID provider.
const OIDC_CHECK: std::time::Duration = std::time::Duration::from_secs(3);

/// Anonymous, 200 as long as the process runs (api.md: a liveness check;
/// `/readyz` is the one that says 503 without the database). What does
/// not answer — the database, the executor (Slurm down), the university's
/// provider — makes it `degraded`, named in the body.
pub async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let kind = match state.settings.executor.kind {
        crate::config::ExecutorKind::Local => "local",
        crate::config::ExecutorKind::Slurm => "slurm",
    };
    let executor = match state.executor_health.problem() {
        None => json!({"kind": kind, "state": "ok"}),
        Some(problem) => json!({"kind": kind, "state": "unavailable", "message": problem}),
    };
    // the university's sign-in, where there is one: an unreachable
    // provider shows here, not only at the next sign-in
    let oidc = match &state.oidc {
        None => serde_json::Value::Null,
        Some(oidc) => match tokio::time::timeout(OIDC_CHECK, oidc.reachable()).await {
            Ok(Ok(())) => json!({"state": "ok"}),
            Ok(Err(problem)) => json!({"state": "unavailable", "message": problem}),
            Err(_) => json!({"state": "unavailable", "message": "the provider did not answer in time"}),
        },
    };
    let healthy = executor["state"] == "ok" && (oidc.is_null() || oidc["state"] == "ok");
    let status = if healthy { "ok" } else { "degraded" };
    match crate::services::ha::database_answers(&state).await {
        true => {
            let mut body = json!({"status": status, "database": "ok", "executor": executor});
            if !oidc.is_null() {
                body["oidc"] = oidc;
            }
            (StatusCode::OK, Json(body))
        }
        false => (StatusCode::OK, Json(json!({"status": "degraded", "database": "unreachable", "executor": executor}))),
    }
}

/// `GET /readyz` (anonymous): this instance's role and the lease's
/// epoch, or 503 while the database cannot be reached.
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match crate::services::ha::readiness(&state).await {
        Some(r) => {
            let role = if r.scheduler { "scheduler" } else { "standby" };
            (StatusCode::OK, Json(json!({"role": role, "epoch": r.epoch})))
        }
        None => (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"status": "unavailable", "database": "unreachable"}))),
    }
}

/// Prometheus text, for an admin or the scraper's `metrics.token` (it
/// names routes, users' activity and the scheduler's state).
pub async fn metrics(
    State(state): State<AppState>,
    caller: Option<axum::Extension<crate::auth::Caller>>,
    scraper: Option<axum::Extension<super::middleware::MetricsScraper>>,
) -> Result<impl IntoResponse, super::error::ApiError> {
    match (caller, scraper) {
        (_, Some(_)) => {}
        (Some(c), None) if c.user.role == app::model::Role::Admin => {}
        (Some(_), None) => {
            return Err(super::error::ApiError::Forbidden("metrics are for admins and the metrics.token".into()))
        }
        (None, None) => return Err(super::error::ApiError::Unauthenticated),
    }
    if let Err(e) = crate::services::metrics::refresh(&state).await {
        tracing::warn!(error = %e, "metrics: cannot read the cluster's counts");
    }
    state.metrics.run_upkeep();
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], state.metrics.render()))
}
