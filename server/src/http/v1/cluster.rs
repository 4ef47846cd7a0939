//! /v1 fair-share and cluster views: the queue, labs and their usage,
//! tiers, placements and LLM backfill. Thin handlers over
//! `crate::services::views`.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiPath, ApiQuery, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::admin::cluster::{self};
use crate::services::views;
use crate::state::AppState;
use app::model::views::{BackfillView, LabUsageSeries, LabView, PlacementView, QueueView};
use app::model::{MaintenanceView, TierView};

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(queue))
        .routes(routes!(labs))
        .routes(routes!(lab_usage))
        .routes(routes!(tiers))
        .routes(routes!(placements))
        .routes(routes!(backfill))
        .routes(routes!(maintenance_status))
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
    Ok(Json(cluster::tiers(&state).await?))
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

/// The maintenance phase (anonymous).
#[utoipa::path(get, path = "/maintenance/status", tag = "cluster",
    responses((status = 200, body = MaintenanceView)))]
async fn maintenance_status(State(state): State<AppState>) -> Result<Json<MaintenanceView>, ApiError> {
    Ok(Json(views::maintenance(&state).await?))
}
