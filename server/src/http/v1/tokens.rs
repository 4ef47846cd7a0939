//! /v1/auth/tokens: personal tokens for scripts (api.md "Personal
//! tokens"), created, listed and revoked by their owner. Every token that
//! can act for the caller is listed, named or issued by a sign-in. A token
//! made with a token is revoked with it; admins list and revoke anyone's.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{AdminUser, ApiJson, ApiPath, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::account;
use crate::state::AppState;
use app::model::views::{PersonalToken, TokenView};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_personal_token, list_personal_tokens))
        .routes(routes!(revoke_personal_token))
        .routes(routes!(list_users_tokens))
        .routes(routes!(revoke_any_token))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateBody {
    /// What the token is for (1 to 64 characters).
    #[schema(min_length = 1, max_length = 64)]
    name: String,
    /// Default 90.
    #[schema(minimum = 1, maximum = 365)]
    expires_in_days: Option<i64>,
}

#[derive(Serialize, ToSchema)]
struct TokenList {
    tokens: Vec<TokenView>,
}

/// Creates a personal token; its secret is in this answer only.
#[utoipa::path(post, path = "/auth/tokens", tag = "auth", request_body = CreateBody, security(("bearer" = [])),
    responses(
        (status = 201, body = PersonalToken),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 422, description = "a field is out of range, named in the message", body = ErrorBody),
    ))]
async fn create_personal_token(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<CreateBody>,
) -> Result<(StatusCode, Json<PersonalToken>), ApiError> {
    let token = account::create_token(&state, &caller, &body.name, body.expires_in_days).await?;
    Ok((StatusCode::CREATED, Json(token)))
}

/// The caller's live tokens, newest first (never their secrets).
#[utoipa::path(get, path = "/auth/tokens", tag = "auth", security(("bearer" = [])),
    responses((status = 200, body = TokenList), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn list_personal_tokens(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<TokenList>, ApiError> {
    Ok(Json(TokenList { tokens: account::tokens(&state, &caller).await? }))
}

/// Revokes one of the caller's tokens: it stops working at once.
#[utoipa::path(delete, path = "/auth/tokens/{id}", tag = "auth", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "revoked"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such live token of the caller's (or the id is not a number)", body = ErrorBody),
    ))]
async fn revoke_personal_token(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    account::revoke_token(&state, &caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A user's live tokens, newest first (never their secrets).
#[utoipa::path(get, path = "/admin/users/{username}/tokens", tag = "admin", params(("username" = String, Path)),
    security(("bearer" = [])),
    responses(
        (status = 200, body = TokenList),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such user", body = ErrorBody),
    ))]
async fn list_users_tokens(
    State(state): State<AppState>,
    AdminUser(_admin): AdminUser,
    ApiPath(username): ApiPath<String>,
) -> Result<Json<TokenList>, ApiError> {
    Ok(Json(TokenList { tokens: crate::services::admin::tokens::tokens_of(&state, &username).await? }))
}

/// Revokes anyone's token, and every token made with it (audited).
#[utoipa::path(delete, path = "/admin/tokens/{id}", tag = "admin", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "revoked"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such live token (or the id is not a number)", body = ErrorBody),
    ))]
async fn revoke_any_token(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    crate::services::admin::tokens::revoke(&state, &admin, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
