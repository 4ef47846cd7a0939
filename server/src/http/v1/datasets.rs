//! `/v1/datasets`, `/v1/data-requests` and their admin side (api.md
//! "Research data"; the rules are in `services::datasets`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{AdminUser, ApiJson, ApiPath, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::datasets::{self, DatasetChange, NewDataRequest, NewDataset, Rejection};
use crate::state::AppState;
use app::model::datasets::{DataRequestList, DataRequestView, DatasetList, DatasetView};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_datasets))
        .routes(routes!(create_request, list_requests))
        .routes(routes!(register_dataset))
        .routes(routes!(change_dataset, delete_dataset))
        .routes(routes!(approve_request))
        .routes(routes!(reject_request))
}

/// The datasets open to the caller's lab (an admin's: all, with each
/// fetch's log).
#[utoipa::path(get, path = "/datasets", tag = "datasets", security(("bearer" = [])),
    responses(
        (status = 200, body = DatasetList),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn list_datasets(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<DatasetList>, ApiError> {
    Ok(Json(datasets::list(&state, &caller).await?))
}

/// Asks the admins for data by URL, with a reason.
#[utoipa::path(post, path = "/data-requests", tag = "datasets", request_body = NewDataRequest, security(("bearer" = [])),
    responses(
        (status = 201, body = DataRequestView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 422, description = "a bad name, URL (http or https only), checksum or reason", body = ErrorBody),
        (status = 429, description = "too many open requests (QUEUE_LIMIT)", body = ErrorBody),
    ))]
async fn create_request(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<NewDataRequest>,
) -> Result<(StatusCode, Json<DataRequestView>), ApiError> {
    Ok((StatusCode::CREATED, Json(datasets::request(&state, &caller, body).await?)))
}

/// The data requests of the caller's lab (an admin's: all), newest first.
#[utoipa::path(get, path = "/data-requests", tag = "datasets", security(("bearer" = [])),
    responses(
        (status = 200, body = DataRequestList),
        (status = 401, description = "not signed in", body = ErrorBody),
    ))]
async fn list_requests(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<DataRequestList>, ApiError> {
    Ok(Json(datasets::requests(&state, &caller).await?))
}

/// Registers a folder (as it is) or a URL (fetched) as a dataset.
#[utoipa::path(post, path = "/admin/datasets", tag = "admin", request_body = NewDataset, security(("bearer" = [])),
    responses(
        (status = 201, body = DatasetView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 409, description = "a dataset of that name exists", body = ErrorBody),
        (status = 422, description = "a bad name, folder, URL, checksum or lab", body = ErrorBody),
    ))]
async fn register_dataset(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewDataset>,
) -> Result<(StatusCode, Json<DatasetView>), ApiError> {
    Ok((StatusCode::CREATED, Json(datasets::register(&state, &admin, body).await?)))
}

/// Opens a dataset to other labs (`labs`: null = every lab) or changes
/// its description.
#[utoipa::path(patch, path = "/admin/datasets/{name}", tag = "admin", request_body = DatasetChange,
    params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = DatasetView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such dataset", body = ErrorBody),
        (status = 422, description = "an unknown lab", body = ErrorBody),
    ))]
async fn change_dataset(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<DatasetChange>,
) -> Result<Json<DatasetView>, ApiError> {
    Ok(Json(datasets::change(&state, &admin, &name, body).await?))
}

/// Deletes a dataset (a fetched one's files with it).
#[utoipa::path(delete, path = "/admin/datasets/{name}", tag = "admin", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such dataset", body = ErrorBody),
        (status = 409, description = "a running job's lab has it open, or it is still fetching", body = ErrorBody),
    ))]
async fn delete_dataset(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    datasets::remove(&state, &admin, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Approves a data request: the dataset is made, open to the requester's
/// lab, and fetched; the requester is told.
#[utoipa::path(post, path = "/admin/data-requests/{id}/approve", tag = "admin", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = DataRequestView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such request", body = ErrorBody),
        (status = 409, description = "already decided, or a dataset of its name exists", body = ErrorBody),
    ))]
async fn approve_request(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<DataRequestView>, ApiError> {
    Ok(Json(datasets::approve(&state, &admin, id).await?))
}

/// Rejects a data request with a reason; the requester is told.
#[utoipa::path(post, path = "/admin/data-requests/{id}/reject", tag = "admin", request_body = Rejection,
    params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = DataRequestView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such request", body = ErrorBody),
        (status = 409, description = "already decided", body = ErrorBody),
        (status = 422, description = "a reason too long", body = ErrorBody),
    ))]
async fn reject_request(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<Rejection>,
) -> Result<Json<DataRequestView>, ApiError> {
    Ok(Json(datasets::reject(&state, &admin, id, body).await?))
}
