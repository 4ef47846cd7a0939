//! /v1/admin: maintenance, labs, users, tiers, nodes, LLM backfill's
//! settings and the audit log. Every handler needs an admin; each is thin
//! over `crate::services::admin` (which audits every change).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{AdminUser, ApiJson, ApiPath, ApiQuery};
use crate::http::openapi::ErrorBody;
use crate::services::admin::backfill::BackfillPatch;
use crate::services::admin::cluster::{self, NewNodeBody, NewTierBody, TierPatch};
use crate::services::admin::oom::{self, OomPatterns};
use crate::services::admin::{self, LabCreated, MaintenanceAction, NewLabBody, NewUserBody, UserPatch};
use crate::services::audit::{self, AuditPage};
use crate::services::views;
use crate::state::AppState;
use app::model::admin::UserView;
use app::model::views::BackfillView;
use app::model::{MaintenanceView, NodeView, TierView};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(update_backfill))
        .routes(routes!(maintenance))
        .routes(routes!(create_lab))
        .routes(routes!(create_user, list_users))
        .routes(routes!(update_user))
        .routes(routes!(create_tier))
        .routes(routes!(update_tier))
        .routes(routes!(create_node, list_nodes))
        .routes(routes!(delete_node))
        .routes(routes!(drain_node))
        .routes(routes!(resume_node))
        .routes(routes!(oom_patterns, set_oom_patterns))
        .routes(routes!(audit_log))
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
    crate::services::admin::backfill::update(&state, &admin, body).await?;
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
    Ok((StatusCode::CREATED, Json(cluster::create_tier(&state, &admin, body).await?)))
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
    Ok(Json(cluster::update_tier(&state, &admin, &name, body).await?))
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
    Ok((StatusCode::CREATED, Json(cluster::create_node(&state, &admin, body).await?)))
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
    Ok(Json(cluster::drain_node(&state, &admin, &name).await?))
}

/// Takes a drained (or draining) node back into service.
#[utoipa::path(post, path = "/admin/nodes/{name}/resume", tag = "admin", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = NodeView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 404, description = "no such node", body = ErrorBody),
        (status = 409, description = "already up, or down (the executor brings it back)", body = ErrorBody),
    ))]
async fn resume_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<NodeView>, ApiError> {
    Ok(Json(cluster::resume_node(&state, &admin, &name).await?))
}

/// Every node with its state (`UP|DRAINING|DRAINED|DOWN`) and what each
/// GPU is doing.
#[utoipa::path(get, path = "/admin/nodes", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<NodeView>),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
    ))]
async fn list_nodes(
    State(state): State<AppState>,
    AdminUser(_admin): AdminUser,
) -> Result<Json<Vec<NodeView>>, ApiError> {
    Ok(Json(cluster::nodes(&state).await?))
}

/// Every user with their lab, role, uid, limit and whether disabled.
#[utoipa::path(get, path = "/admin/users", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<UserView>),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
    ))]
async fn list_users(
    State(state): State<AppState>,
    AdminUser(_admin): AdminUser,
) -> Result<Json<Vec<UserView>>, ApiError> {
    Ok(Json(admin::users(&state).await?))
}

/// Policy §6's GPU-OOM signatures in force (the built-in list until an
/// admin sets one).
#[utoipa::path(get, path = "/admin/oom-patterns", tag = "admin", security(("bearer" = [])),
    responses(
        (status = 200, body = OomPatterns),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
    ))]
async fn oom_patterns(
    State(state): State<AppState>,
    AdminUser(_admin): AdminUser,
) -> Result<Json<OomPatterns>, ApiError> {
    Ok(Json(oom::get(&state).await?))
}

/// Replaces the GPU-OOM signatures (case-insensitive substrings, at most
/// 100 of 1–200 characters); in force at the next attempt end.
#[utoipa::path(put, path = "/admin/oom-patterns", tag = "admin", request_body = OomPatterns, security(("bearer" = [])),
    responses(
        (status = 200, body = OomPatterns),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "not an admin", body = ErrorBody),
        (status = 422, description = "a pattern empty, too long or not printable; too many", body = ErrorBody),
    ))]
async fn set_oom_patterns(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<OomPatterns>,
) -> Result<Json<OomPatterns>, ApiError> {
    Ok(Json(oom::set(&state, &admin, body).await?))
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
    cluster::delete_node(&state, &admin, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, IntoParams)]
struct AuditQuery {
    /// 1–1000, default 100.
    limit: Option<i64>,
    /// The previous page's `next`.
    before: Option<i64>,
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
    Ok(Json(audit::page(&state, q.before, q.limit).await?))
}
