//! /v1 fair-share and cluster views (queue, labs, usage, tiers,
//! placements, backfill) and the admin endpoints (maintenance, labs,
//! users, tiers, nodes).

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{delete, get, patch, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::error::ApiError;
use super::extract::{AdminUser, ApiJson, ApiPath, ApiQuery, AuthUser};
use crate::admin::{self, MaintenanceAction, NewLabBody, NewUserBody, UserPatch};
use crate::admin_cluster::{self, NewNodeBody, NewTierBody, TierPatch};
use crate::state::AppState;
use crate::views;
use app::model::{MaintenanceView, NodeView, TierView};
use app::views::{BackfillView, LabUsageSeries, LabView, PlacementView, QueueView};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/queue", get(queue))
        .route("/labs", get(labs))
        .route("/labs/{name}/usage", get(lab_usage))
        .route("/tiers", get(tiers))
        .route("/placements", get(placements))
        .route("/backfill", get(backfill))
        .route("/admin/maintenance", post(maintenance))
        .route("/admin/labs", post(create_lab))
        .route("/admin/users", post(create_user))
        .route("/admin/users/{username}", patch(update_user))
        .route("/admin/tiers", post(create_tier))
        .route("/admin/tiers/{name}", patch(update_tier))
        .route("/admin/nodes", post(create_node))
        .route("/admin/nodes/{name}", delete(delete_node))
        .route("/admin/nodes/{name}/drain", post(drain_node))
}

async fn queue(State(state): State<AppState>, AuthUser(caller): AuthUser) -> Result<Json<QueueView>, ApiError> {
    Ok(Json(views::queue(&state, &caller, None).await?))
}

async fn labs(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<Vec<LabView>>, ApiError> {
    Ok(Json(views::labs(&state).await?))
}

#[derive(Deserialize)]
struct UsageQuery {
    days: Option<i64>,
}

async fn lab_usage(
    State(state): State<AppState>,
    AuthUser(_caller): AuthUser,
    ApiPath(name): ApiPath<String>,
    ApiQuery(q): ApiQuery<UsageQuery>,
) -> Result<Json<LabUsageSeries>, ApiError> {
    Ok(Json(views::lab_usage(&state, &name, q.days).await?))
}

async fn tiers(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<Vec<TierView>>, ApiError> {
    Ok(Json(crate::db::cluster::list_tiers(&mut *state.db.acquire().await?).await?))
}

async fn placements(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<Vec<PlacementView>>, ApiError> {
    Ok(Json(views::placements(&state).await?))
}

async fn backfill(State(state): State<AppState>, AuthUser(_caller): AuthUser) -> Result<Json<BackfillView>, ApiError> {
    Ok(Json(views::backfill(&state).await?))
}

async fn maintenance(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(action): ApiJson<MaintenanceAction>,
) -> Result<Json<MaintenanceView>, ApiError> {
    Ok(Json(admin::maintenance(&state, &admin, action).await?))
}

async fn create_lab(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewLabBody>,
) -> Result<(StatusCode, Json<serde_json::Value>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin::create_lab(&state, &admin, body).await?)))
}

async fn create_user(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewUserBody>,
) -> Result<(StatusCode, Json<app::model::Viewer>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin::create_user(&state, &admin, body).await?)))
}

async fn update_user(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(username): ApiPath<String>,
    ApiJson(body): ApiJson<UserPatch>,
) -> Result<Json<app::model::Viewer>, ApiError> {
    Ok(Json(admin::update_user(&state, &admin, &username, body).await?))
}

async fn create_tier(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewTierBody>,
) -> Result<(StatusCode, Json<TierView>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin_cluster::create_tier(&state, &admin, body).await?)))
}

async fn update_tier(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<TierPatch>,
) -> Result<Json<TierView>, ApiError> {
    Ok(Json(admin_cluster::update_tier(&state, &admin, &name, body).await?))
}

async fn create_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<NewNodeBody>,
) -> Result<(StatusCode, Json<NodeView>), ApiError> {
    Ok((StatusCode::CREATED, Json(admin_cluster::create_node(&state, &admin, body).await?)))
}

async fn drain_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<NodeView>, ApiError> {
    Ok(Json(admin_cluster::drain_node(&state, &admin, &name).await?))
}

async fn delete_node(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    admin_cluster::delete_node(&state, &admin, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}
