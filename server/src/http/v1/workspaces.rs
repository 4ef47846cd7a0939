//! /v1 workspaces: a lab's container images for jobs (api.md). Thin
//! handlers over `crate::services::workspaces`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, ApiPath, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::workspaces::{self, NewWorkspaceBody};
use crate::state::AppState;
use app::model::views::WorkspaceView;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_workspaces, create_workspace)).routes(routes!(get_workspace))
}

/// The caller's lab's workspaces (admins see every lab's).
#[utoipa::path(get, path = "/workspaces", tag = "workspaces", security(("bearer" = [])),
    responses((status = 200, body = Vec<WorkspaceView>), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn list_workspaces(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
) -> Result<Json<Vec<WorkspaceView>>, ApiError> {
    Ok(Json(workspaces::list(&state, &caller).await?))
}

/// Creates a workspace in the caller's lab and starts building its image
/// (status `BUILDING`; poll `GET /v1/workspaces/{name}`). A `FAILED`
/// workspace of the same name is rebuilt.
#[utoipa::path(post, path = "/workspaces", tag = "workspaces", request_body = NewWorkspaceBody, security(("bearer" = [])),
    responses(
        (status = 201, body = WorkspaceView),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 409, description = "a workspace of that name is building or ready", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
    ))]
async fn create_workspace(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<NewWorkspaceBody>,
) -> Result<(StatusCode, Json<WorkspaceView>), ApiError> {
    Ok((StatusCode::CREATED, Json(workspaces::create(&state, &caller, body).await?)))
}

/// One of the caller's lab's workspaces: status and build log.
#[utoipa::path(get, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = WorkspaceView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such workspace in the caller's lab", body = ErrorBody),
    ))]
async fn get_workspace(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<WorkspaceView>, ApiError> {
    Ok(Json(workspaces::get(&state, &caller, &name).await?))
}
