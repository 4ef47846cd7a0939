//! The /v1 REST API (api.md). Handlers are thin: state, one call, map.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiError;
use super::extract::{AdminUser, ApiJson, ApiQuery, AuthUser, ClientAddr};
use super::openapi::ErrorBody;
use crate::auth;
use crate::clock::{now_ms, rfc3339};
use crate::state::AppState;
use app::model::{MaintenanceView, Viewer};

pub fn router() -> Router<AppState> {
    let api = OpenApiRouter::new()
        .routes(routes!(create_token, revoke_token))
        .routes(routes!(me))
        .routes(routes!(maintenance_status))
        .routes(routes!(audit_log))
        .merge(super::v1_jobs::api())
        .merge(super::v1_views::api())
        .merge(super::v1_workspaces::api());
    super::openapi::serve(api).fallback(|| async { ApiError::NotFound("no such endpoint".into()) })
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct TokenRequest {
    username: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
struct TokenResponse {
    token: String,
    expires_at: String,
}

/// Signs in with a password and returns a new API token (shown once).
#[utoipa::path(post, path = "/auth/token", tag = "auth", request_body = TokenRequest,
    responses(
        (status = 201, description = "a new token", body = TokenResponse),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "wrong username or password", body = ErrorBody),
        (status = 403, description = "the account is disabled", body = ErrorBody),
        (status = 422, description = "a field is missing or mistyped", body = ErrorBody),
        (status = 429, description = "too many failed sign-ins, or too many at once (see Retry-After)", body = ErrorBody),
    ))]
async fn create_token(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    ApiJson(body): ApiJson<TokenRequest>,
) -> Result<(StatusCode, Json<TokenResponse>), ApiError> {
    let user = auth::authenticate(&state.db, &state.throttle, &body.username, &body.password, client).await?;
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued = auth::issue_token(&state.db, user.id, ttl, now_ms()).await?;
    Ok((StatusCode::CREATED, Json(TokenResponse { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })))
}

/// Revokes the token this request presents.
#[utoipa::path(delete, path = "/auth/token", tag = "auth", security(("bearer" = [])),
    responses(
        (status = 204, description = "revoked"),
        (status = 400, description = "the request carries no bearer token", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn revoke_token(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<StatusCode, ApiError> {
    let token_id =
        caller.token_id.ok_or_else(|| ApiError::BadRequest("no bearer token in this request to revoke".into()))?;
    crate::db::accounts::revoke_token(&mut *state.db.acquire().await?, token_id, now_ms()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who the caller is.
#[utoipa::path(get, path = "/me", tag = "auth", security(("bearer" = [])),
    responses((status = 200, body = Viewer), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn me(AuthUser(caller): AuthUser) -> Json<Viewer> {
    Json(caller.user.viewer())
}

/// The maintenance phase (anonymous).
#[utoipa::path(get, path = "/maintenance/status", tag = "cluster",
    responses((status = 200, body = MaintenanceView)))]
async fn maintenance_status(State(state): State<AppState>) -> Result<Json<MaintenanceView>, ApiError> {
    Ok(Json(state.maintenance_view().await?))
}

#[derive(Deserialize, IntoParams)]
struct AuditQuery {
    /// 1–1000, default 100.
    limit: Option<i64>,
    /// The previous page's `next`.
    before: Option<i64>,
}

#[derive(Serialize, ToSchema)]
struct AuditEntry {
    id: i64,
    at: String,
    actor: String,
    action: String,
    target: Option<String>,
    #[schema(value_type = Object)]
    detail: serde_json::Value,
}

#[derive(Serialize, ToSchema)]
struct AuditPage {
    entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; null at the end.
    next: Option<i64>,
}

/// Every admin action, newest first.
#[utoipa::path(get, path = "/admin/audit", tag = "admin", params(AuditQuery), security(("bearer" = [])),
    responses(
        (status = 200, body = AuditPage),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 422, description = "`limit` out of range", body = ErrorBody),
    ))]
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
            detail: serde_json::from_str(&r.detail).unwrap_or_else(|_| serde_json::json!({})),
        })
        .collect();
    Ok(Json(AuditPage { entries, next }))
}
