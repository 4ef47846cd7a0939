//! `/v1/me/storage`: what the caller's home and lab share hold against
//! their quotas (api.md "Research data"; the rules in `services::storage`).

use axum::extract::State;
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::AuthUser;
use crate::http::openapi::ErrorBody;
use crate::services::storage;
use crate::state::AppState;
use app::model::storage::StorageView;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(my_storage))
}

/// The caller's home and lab share: where they are, what they hold (as
/// last measured: after each job's end and in the background), and their
/// quotas.
#[utoipa::path(get, path = "/me/storage", tag = "storage", security(("bearer" = [])),
    responses(
        (status = 200, body = StorageView),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn my_storage(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<Json<StorageView>, ApiError> {
    Ok(Json(storage::my_storage(&state, &caller).await?))
}
