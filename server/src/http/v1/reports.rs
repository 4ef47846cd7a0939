//! /v1/reports: usage by lab, user, tier or month, as JSON or CSV.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiQuery, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::reports::{self, ReportQuery};
use crate::state::AppState;
use app::model::views::UsageReport;

pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(usage_report))
}

/// Raw usage from the charge ledger (research and reservation charges, not
/// decayed) in a window of days, summed by lab, user, tier or month; the
/// caller's own lab's rows (every lab's for admins). `format=csv` answers
/// a CSV file with the same columns.
#[utoipa::path(get, path = "/reports/usage", tag = "reports", params(ReportQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "the report; a CSV file (group, jobs, gpu_hours, tflop_s) with format=csv",
            content((UsageReport = "application/json"), (String = "text/csv"))),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 422, description = "a parameter out of range, named in the message", body = ErrorBody),
    ))]
async fn usage_report(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> Result<Response, ApiError> {
    let report = reports::usage(&state, &caller, &q).await?;
    if !reports::wants_csv(&q)? {
        return Ok(Json(report).into_response());
    }
    let file = format!("attachment; filename=\"usage-{}-{}-by-{}.csv\"", report.from, report.to, report.by);
    let body = reports::to_csv(&report)?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()), (header::CONTENT_DISPOSITION, file)], body)
        .into_response())
}
