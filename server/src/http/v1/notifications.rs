//! /v1/me/notifications: the caller's notification settings and the
//! deliveries made for them.

use axum::extract::State;
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::notifications::{self, SettingsBody};
use crate::state::AppState;
use app::model::views::{Deliveries, NotificationSettings};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_settings, put_settings)).routes(routes!(list_deliveries))
}

/// The caller's notification settings (never the webhook secret).
#[utoipa::path(get, path = "/me/notifications", tag = "notifications", security(("bearer" = [])),
    responses(
        (status = 200, body = NotificationSettings),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn get_settings(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<NotificationSettings>, ApiError> {
    Ok(Json(notifications::get(&state, &caller).await?))
}

/// Replaces the caller's settings. Setting a new webhook URL answers its
/// signing secret, this once: each delivery is signed
/// `X-JPU-Signature: sha256=<hex HMAC-SHA256 of the body>` with it.
#[utoipa::path(put, path = "/me/notifications", tag = "notifications", request_body = SettingsBody,
    security(("bearer" = [])),
    responses(
        (status = 200, body = NotificationSettings),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 422, description = "a field is wrong (e.g. a webhook to a link-local address), named in the message", body = ErrorBody),
    ))]
async fn put_settings(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<SettingsBody>,
) -> Result<Json<NotificationSettings>, ApiError> {
    Ok(Json(notifications::put(&state, &caller, body).await?))
}

/// The caller's latest deliveries (newest first, at most 100) and how
/// each went.
#[utoipa::path(get, path = "/me/notifications/deliveries", tag = "notifications", security(("bearer" = [])),
    responses(
        (status = 200, body = Deliveries),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn list_deliveries(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<Deliveries>, ApiError> {
    Ok(Json(notifications::deliveries(&state, &caller).await?))
}
