//! The /v1 REST API (api.md), by resource: `jobs`, `cluster` (queue,
//! labs, usage, tiers, placements, backfill, maintenance status), `admin`
//! `workspaces` and personal `tokens`; the sign-in endpoints are here. Handlers are thin:
//! state, one service call, the error mapped once (`ApiError`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

mod admin;
mod cluster;
mod datasets;
mod device;
mod files;
mod jobs;
mod notifications;
mod reports;
mod sessions;
mod storage;
mod tokens;
mod workspaces;

use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, AuthUser, ClientAddr};
use crate::http::openapi::ErrorBody;
use crate::services::account;
use crate::state::AppState;
use app::model::Viewer;

pub fn router() -> Router<AppState> {
    let api = OpenApiRouter::new()
        .routes(routes!(create_token, revoke_token))
        .routes(routes!(me))
        .merge(jobs::api())
        .merge(cluster::api())
        .merge(admin::api())
        .merge(reports::api())
        .merge(notifications::api())
        .merge(workspaces::api())
        .merge(sessions::api())
        .merge(storage::api())
        .merge(files::api())
        .merge(datasets::api())
        .merge(tokens::api())
        .merge(device::api());
    crate::http::openapi::serve(api).fallback(|| async { ApiError::NotFound("no such endpoint".into()) })
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
    let issued = account::sign_in_for_token(&state, &body.username, &body.password, client).await?;
    Ok((StatusCode::CREATED, Json(TokenResponse { token: issued.token, expires_at: issued.expires_at })))
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
    account::revoke_token(&state, &caller, token_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who the caller is.
#[utoipa::path(get, path = "/me", tag = "auth", security(("bearer" = [])),
    responses((status = 200, body = Viewer), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn me(AuthUser(caller): AuthUser) -> Json<Viewer> {
    Json(caller.user.viewer())
}
