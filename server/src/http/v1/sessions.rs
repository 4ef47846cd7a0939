//! `POST /v1/sessions`: start an interactive session (api.md
//! "Interactive sessions"). Sessions are jobs: `GET /v1/jobs?kind=session`
//! lists them, `GET /v1/jobs/{id}` shows one, cancel ends one.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::sessions::{self, StartBody};
use crate::state::AppState;
use app::model::JobView;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(start_session))
}

/// Starts a session: a job of kind `session` in the same queues as any
/// job; its `session.url` opens the app once `session.state` is `READY`.
#[utoipa::path(post, path = "/sessions", tag = "sessions", request_body = StartBody, security(("bearer" = [])),
    responses(
        (status = 201, body = JobView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "this account cannot run jobs here", body = ErrorBody),
        (status = 409, description = "sessions cannot run on this site's executor", body = ErrorBody),
        (status = 422, description = "a field is out of range or names no app, named in the message", body = ErrorBody),
        (status = 429, description = "QUEUE_LIMIT: sessions.max_per_user or the per-user job limit", body = ErrorBody),
        (status = 503, description = "maintenance: no new jobs", body = ErrorBody),
    ))]
async fn start_session(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<StartBody>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    let job = sessions::start(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(job)))
}
