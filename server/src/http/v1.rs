//! The /v1 REST API (api.md). Handlers are thin: state, one call, map.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::extract::{AdminUser, ApiJson, ApiQuery, AuthUser};
use crate::auth;
use crate::clock::{now_ms, rfc3339};
use crate::state::AppState;
use app::model::{MaintenanceView, Viewer};


pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth/token", post(create_token).delete(revoke_token))
        .route("/me", get(me))
        .route("/maintenance/status", get(maintenance_status))
        .route("/admin/audit", get(audit_log))
        .merge(super::v1_jobs::router())
        .merge(super::v1_views::router())
        .fallback(|| async { ApiError::NotFound("no such endpoint".into()) })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenRequest {
    username: String,
    password: String,
}

#[derive(Serialize)]
struct TokenResponse {
    token: String,
    expires_at: String,
}

async fn create_token(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<TokenRequest>,
) -> Result<(StatusCode, Json<TokenResponse>), ApiError> {
    let user = auth::authenticate(&state.db, &state.throttle, &body.username, &body.password).await?;
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued = auth::issue_token(&state.db, user.id, ttl, now_ms()).await?;
    Ok((StatusCode::CREATED, Json(TokenResponse { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })))
}

async fn revoke_token(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<StatusCode, ApiError> {
    let token_id = caller
        .token_id
        .ok_or_else(|| ApiError::BadRequest("no bearer token in this request to revoke".into()))?;
    crate::db::accounts::revoke_token(&mut *state.db.acquire().await?, token_id, now_ms()).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn me(AuthUser(caller): AuthUser) -> Json<Viewer> {
    Json(caller.user.viewer())
}

async fn maintenance_status(State(state): State<AppState>) -> Result<Json<MaintenanceView>, ApiError> {
    Ok(Json(state.maintenance_view().await?))
}

#[derive(Deserialize)]
struct AuditQuery {
    limit: Option<i64>,
    before: Option<i64>,
}

#[derive(Serialize)]
struct AuditEntry {
    id: i64,
    at: String,
    actor: String,
    action: String,
    target: Option<String>,
    detail: serde_json::Value,
}

#[derive(Serialize)]
struct AuditPage {
    entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; null at the end.
    next: Option<i64>,
}

async fn audit_log(
    State(state): State<AppState>,
    AdminUser(_admin): AdminUser,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Json<AuditPage>, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::Validation("limit must be between 1 and 1000".into()));
    }
    let rows = crate::db::audit::list(&mut *state.db.acquire().await?, q.before.unwrap_or(i64::MAX), limit).await?;
    let next = (rows.len() as i64 == limit).then(|| rows.last().map(|r| r.id)).flatten();
    let entries = rows
        .into_iter()
        .map(|r| AuditEntry {
            id: r.id,
            at: rfc3339(r.at_ms),
            actor: r.actor,
            action: r.action,
            target: r.target,
            detail: serde_json::from_str(&r.detail).unwrap_or(serde_json::Value::Null),
        })
        .collect();
    Ok(Json(AuditPage { entries, next }))
}
