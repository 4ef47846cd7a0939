//! /v1 fair-share and cluster views (queue, labs, usage, tiers,
//! placements, backfill) and the admin endpoints (maintenance, labs,
//! users, tiers, nodes).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiError;
use super::extract::{AdminUser, ApiJson, ApiPath, ApiQuery, AuthUser};
use super::openapi::ErrorBody;
use crate::admin::{self, LabCreated, MaintenanceAction, NewLabBody, NewUserBody, UserPatch};
use crate::admin_backfill::BackfillPatch;
use crate::admin_cluster::{self, NewNodeBody, NewTierBody, TierPatch};
use crate::state::AppState;
use crate::views;
use app::model::{MaintenanceView, NodeView, TierView};
use app::views::{BackfillView, LabUsageSeries, LabView, PlacementView, QueueView};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(queue))
        .routes(routes!(labs))
        .routes(routes!(lab_usage))
        .routes(routes!(tiers))
        .routes(routes!(placements))
        .routes(routes!(backfill))
        .routes(routes!(update_backfill))
        .routes(routes!(maintenance))
        .routes(routes!(create_lab))
        .routes(routes!(create_user))
        .routes(routes!(update_user))
        .routes(routes!(create_tier))
        .routes(routes!(update_tier))
        .routes(routes!(create_node))
        .routes(routes!(delete_node))
        .routes(routes!(drain_node))
}

/// The global queue in this cycle's order, and the caller's personal queue.
#[utoipa::path(get, path = "/queue", tag = "cluster", security(("bearer" = [])),
    responses((status = 200, body = QueueView), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn queue(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<Json<QueueView>, ApiError> {
    Ok(Json(views::queue(&state, &caller, None).await?))
}

/// Every lab's decayed usage, running GPUs and queued jobs.
#[utoipa::path(get, path = "/labs", tag = "cluster", security(("bearer" = [])),
    responses((status = 200, body = Vec<LabView>), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn labs(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<Vec<LabView>>, ApiError> {
    Ok(Json(views::labs(&state).await?))
}

#[derive(Deserialize, IntoParams)]
struct UsageQuery {
    /// 1–366, default 30.
    days: Option<i64>,
}

/// A lab's charges per UTC day by tier.
#[utoipa::path(get, path = "/labs/{name}/usage", tag = "cluster", params(("name" = String, Path), UsageQuery), security(("bearer" = [])),
    responses((status = 200, body = LabUsageSeries), (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such lab", body = ErrorBody), (status = 422, description = "`days` out of range", body = ErrorBody)))]
async fn lab_usage(
    State(state): State<AppState>,
    AuthUser(_caller): AuthUser,
    ApiPath(name): ApiPath<String>,
    ApiQuery(q): ApiQuery<UsageQuery>,
) -> Result<Json<LabUsageSeries>, ApiError> {
    Ok(Json(views::lab_usage(&state, &name, q.days).await?))
}

/// GPU tiers, best first.
#[utoipa::path(get, path = "/tiers", tag = "cluster", security(("bearer" = [])),
    responses((status = 200, body = Vec<TierView>), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn tiers(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<Vec<TierView>>, ApiError> {
    Ok(Json(crate::db::cluster::list_tiers(&mut *state.db.acquire().await?).await?))
}

/// Every (node, tier) with its GPUs by use.
#[utoipa::path(get, path = "/placements", tag = "cluster", security(("bearer" = [])),
    responses((status = 200, body = Vec<PlacementView>), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn placements(
    State(state): State<AppState>,
    AuthUser(_caller): AuthUser,
) -> Result<Json<Vec<PlacementView>>, ApiError> {
    Ok(Json(views::placements(&state).await?))
}

/// Running LLM-backfill instances and the GPU-hours served.
#[utoipa::path(get, path = "/backfill", tag = "cluster", security(("bearer" = [])),
    responses((status = 200, body = BackfillView), (status = 401, description = "not signed in", body = ErrorBody)))]
async fn backfill(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<Json<BackfillView>, ApiError> {
    let admin = caller.user.role == app::model::Role::Admin;
    Ok(Json(views::backfill(&state, admin).await?))
}

/// Changes LLM backfill's settings (in force at the next cycle, kept
/// across restarts): switch it on or off, its command, the idle time
/// before deploying, GPUs per instance.
#[utoipa::path(patch, path = "/admin/backfill", tag = "admin", request_body = BackfillPatch, security(("bearer" = [])),
    responses(
        (status = 200, body = BackfillView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range, or enabled without a command; the message names the field", body = ErrorBody),
    ))]
async fn update_backfill(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<BackfillPatch>,
) -> Result<Json<BackfillView>, ApiError> {
    crate::admin_backfill::update(&state, &admin, body).await?;
    Ok(Json(views::backfill(&state, true).await?))
}

/// Starts maintenance (it then drains by itself) or ends it.
#[utoipa::path(post, path = "/admin/maintenance", tag = "admin", request_body = MaintenanceAction, security(("bearer" = [])),
    responses(
        (status = 200, body = MaintenanceView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 409, description = "maintenance is already on / not on", body = ErrorBody),
    ))]
async fn maintenance(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(action): ApiJson<MaintenanceAction>,
) -> Result<Json<MaintenanceView>, ApiError> {
    Ok(Json(admin::maintenance(&state, &admin, action).await?))
}

/// Creates a lab.
#[utoipa::path(post, path = "/admin/labs", tag = "admin", request_body = NewLabBody, security(("bearer" = [])),
    responses(
        (status = 201, body = LabCreated),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 409, description = "already exists", body = ErrorBody),
    ))]
async fn create_lab(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewLabBody>,
) -> Result<(StatusCode, Json<LabCreated>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin::create_lab(&state, &admin, body).await?)))
}

/// Creates a user in a lab.
#[utoipa::path(post, path = "/admin/users", tag = "admin", request_body = NewUserBody, security(("bearer" = [])),
    responses(
        (status = 201, body = app::model::Viewer),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 409, description = "already exists", body = ErrorBody),
    ))]
async fn create_user(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewUserBody>,
) -> Result<(StatusCode, Json<app::model::Viewer>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin::create_user(&state, &admin, body).await?)))
}

/// Changes a user's lab, role, uid or concurrency limit, or resets the password.
#[utoipa::path(patch, path = "/admin/users/{username}", tag = "admin", request_body = UserPatch, params(("username" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = app::model::Viewer),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 404, description = "no such user", body = ErrorBody),
        (status = 409, description = "an admin demoting themselves", body = ErrorBody),
    ))]
async fn update_user(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(username): ApiPath<String>,
    ApiJson(body): ApiJson<UserPatch>,
) -> Result<Json<app::model::Viewer>, ApiError> {
    Ok(Json(admin::update_user(&state, &admin, &username, body).await?))
}

/// Adds a GPU tier.
#[utoipa::path(post, path = "/admin/tiers", tag = "admin", request_body = NewTierBody, security(("bearer" = [])),
    responses(
        (status = 201, body = TierView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 409, description = "already exists", body = ErrorBody),
    ))]
async fn create_tier(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewTierBody>,
) -> Result<(StatusCode, Json<TierView>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin_cluster::create_tier(&state, &admin, body).await?)))
}

/// Edits a tier (any field but its name).
#[utoipa::path(patch, path = "/admin/tiers/{name}", tag = "admin", request_body = TierPatch, params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = TierView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 404, description = "no such tier", body = ErrorBody),
    ))]
async fn update_tier(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<TierPatch>,
) -> Result<Json<TierView>, ApiError> {
    Ok(Json(admin_cluster::update_tier(&state, &admin, &name, body).await?))
}

/// Adds a node with its GPUs (indices from 0 in the order given).
#[utoipa::path(post, path = "/admin/nodes", tag = "admin", request_body = NewNodeBody, security(("bearer" = [])),
    responses(
        (status = 201, body = NodeView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 422, description = "a field out of range; the message names it", body = ErrorBody),
        (status = 409, description = "already exists", body = ErrorBody),
    ))]
async fn create_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewNodeBody>,
) -> Result<(StatusCode, Json<NodeView>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin_cluster::create_node(&state, &admin, body).await?)))
}

/// Stops new dispatches to a node; what runs there finishes.
#[utoipa::path(post, path = "/admin/nodes/{name}/drain", tag = "admin", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = NodeView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such node", body = ErrorBody),
        (status = 409, description = "already draining", body = ErrorBody),
    ))]
async fn drain_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<NodeView>, ApiError> {
    Ok(Json(admin_cluster::drain_node(&state, &admin, &name).await?))
}

/// Removes a node nothing runs on.
#[utoipa::path(delete, path = "/admin/nodes/{name}", tag = "admin", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "removed"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such node", body = ErrorBody),
        (status = 409, description = "jobs or backfill still run there", body = ErrorBody),
    ))]
async fn delete_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    admin_cluster::delete_node(&state, &admin, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}
