//! `POST /v1/auth/device` and `POST /v1/auth/device/token`: the CLI's
//! sign-in through the university (api.md), anonymous like
//! `POST /v1/auth/token`; the rules are in `services::device`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::auth::oidc::DeviceStart;
use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, ApiQuery, ClientAddr};
use crate::http::openapi::ErrorBody;
use crate::services::device;
use crate::state::AppState;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(start_device_sign_in)).routes(routes!(finish_device_sign_in))
}

/// Starts a sign-in through the university for a device without a
/// browser: open `verification_uri` anywhere and enter `user_code`.
#[utoipa::path(post, path = "/auth/device", tag = "auth", params(StartQuery),
    responses(
        (status = 200, body = DeviceStart),
        (status = 404, description = "this site has no university sign-in", body = ErrorBody),
        (status = 422, description = "a malformed query", body = ErrorBody),
        (status = 429, description = "too many sign-ins started from this address in the last minute", body = ErrorBody),
    ))]
async fn start_device_sign_in(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    ApiQuery(q): ApiQuery<StartQuery>,
) -> Result<Json<DeviceStart>, ApiError> {
    Ok(Json(device::start(&state, client, q.device.as_deref()).await?))
}

#[derive(Deserialize, IntoParams)]
struct StartQuery {
    /// What the device calls itself (e.g. its host name), shown to the
    /// person on the page where they approve it.
    #[param(max_length = 40)]
    device: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct FinishBody {
    #[schema(min_length = 1, max_length = 1024)]
    device_code: String,
    /// Accepted for older clients and ignored: the token is named after
    /// the device as its approval page showed it.
    #[schema(max_length = 40)]
    #[allow(dead_code)]
    device: Option<String>,
}

#[derive(Serialize, ToSchema)]
struct Signed {
    token: String,
    expires_at: String,
}

/// Polls a device sign-in: `428 AUTHORIZATION_PENDING` until the person
/// has approved it on this site's page (signing in at the university),
/// then a personal token.
#[utoipa::path(post, path = "/auth/device/token", tag = "auth", request_body = FinishBody,
    responses(
        (status = 201, body = Signed),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 403, description = "declined at the university, or this site's rules keep the person out", body = ErrorBody),
        (status = 404, description = "this site has no university sign-in", body = ErrorBody),
        (status = 422, description = "the device code expired, was used or is unknown", body = ErrorBody),
        (status = 428, description = "not signed in at the university yet: poll again after `interval`", body = ErrorBody),
    ))]
async fn finish_device_sign_in(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    ApiJson(body): ApiJson<FinishBody>,
) -> Result<(StatusCode, Json<Signed>), ApiError> {
    let issued = device::finish(&state, client, &body.device_code).await?;
    Ok((StatusCode::CREATED, Json(Signed { token: issued.token, expires_at: issued.expires_at })))
}
