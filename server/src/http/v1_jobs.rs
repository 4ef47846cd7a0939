//! /v1/jobs: submit, list, get, cancel, logs (offsets and Server-Sent
//! Events) and output files. Handlers are thin: state, one call, map.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use serde::Deserialize;

use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, ApiQuery, AuthUser};
use crate::executor::layout::Layout;
use crate::jobs::{self, input::{SubmitBody, ValidSubmit}, output, ListQuery};
use crate::state::AppState;
use app::model::JobView;
use app::views::{FileEntry, JobPage, LogChunk};

/// How often a log stream looks for new output.
const STREAM_POLL: Duration = Duration::from_millis(250);

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/jobs", post(submit_job).get(list_jobs))
        .route("/jobs/{id}", get(get_job))
        .route("/jobs/{id}/cancel", post(cancel_job))
        .route("/jobs/{id}/logs", get(job_logs))
        .route("/jobs/{id}/logs/stream", get(job_log_stream))
        .route("/jobs/{id}/files", get(job_files))
        .route("/jobs/{id}/files/{*path}", get(job_file))
}

fn layout(state: &AppState) -> Layout {
    Layout::new(&state.settings.executor.output_root)
}

async fn submit_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<SubmitBody>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    let job = ValidSubmit::try_from(body).map_err(jobs::JobsError::from)?;
    Ok((StatusCode::CREATED, Json(jobs::submit(&state, &caller, job).await?)))
}

async fn list_jobs(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<JobPage>, ApiError> {
    Ok(Json(jobs::list(&state, &caller, &q).await?))
}

async fn get_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(jobs::get(&state, &caller, id).await?))
}

async fn cancel_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    Ok((StatusCode::ACCEPTED, Json(jobs::cancel(&state, &caller, id).await?)))
}

#[derive(Deserialize)]
struct LogQuery {
    offset: Option<u64>,
}

/// A job the caller may read the output of (owner or admin).
async fn readable_job(state: &AppState, caller: &crate::auth::Caller, id: i64) -> Result<JobView, ApiError> {
    let job = jobs::get(state, caller, id).await?;
    output::check_owner(caller, &job)?;
    Ok(job)
}

async fn job_logs(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Json<LogChunk>, ApiError> {
    let job = readable_job(&state, &caller, id).await?;
    Ok(Json(output::read_log(&layout(&state), &job, q.offset.unwrap_or(0))?))
}

/// New output as `log` events (the event id is the next offset, so a
/// reconnecting client resumes with `Last-Event-ID`), then one `end`
/// event with the job's final state.
async fn job_log_stream(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<LogQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let job = readable_job(&state, &caller, id).await?;
    let resume = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let offset = resume.or(q.offset).unwrap_or(0);
    output::read_log(&layout(&state), &job, offset)?; // a bad offset is an error now, not an empty stream
    let stream = futures_util::stream::unfold(Some((state, caller, job, offset)), |step| async move {
        let (state, caller, mut job, offset) = step?;
        loop {
            let chunk = match output::read_log(&layout(&state), &job, offset) {
                Ok(chunk) => chunk,
                Err(e) => {
                    let event = Event::default().event("error").data(e.to_string());
                    return Some((Ok(event), None));
                }
            };
            if !chunk.data.is_empty() {
                let event = Event::default().event("log").id(chunk.next_offset.to_string()).data(chunk.data);
                return Some((Ok(event), Some((state, caller, job, chunk.next_offset))));
            }
            if chunk.eof {
                let event = Event::default().event("end").data(job.state.as_str());
                return Some((Ok(event), None));
            }
            tokio::time::sleep(STREAM_POLL).await;
            match jobs::get(&state, &caller, job.id).await {
                Ok(fresh) => job = fresh,
                Err(e) => return Some((Ok(Event::default().event("error").data(e.to_string())), None)),
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

async fn job_files(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<Vec<FileEntry>>, ApiError> {
    readable_job(&state, &caller, id).await?;
    let layout = layout(&state);
    let files = tokio::task::spawn_blocking(move || output::list_files(&layout, id))
        .await
        .map_err(|e| ApiError::Internal(format!("listing files: {e}")))??;
    Ok(Json(files))
}

async fn job_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((id, path)): ApiPath<(i64, String)>,
) -> Result<Response, ApiError> {
    readable_job(&state, &caller, id).await?;
    let layout = layout(&state);
    let (file, real) = tokio::task::spawn_blocking(move || output::open_file(&layout, id, &path))
        .await
        .map_err(|e| ApiError::Internal(format!("opening file: {e}")))??;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let name = real.file_name().map(|n| n.to_string_lossy().replace('"', "")).unwrap_or_default();
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file)));
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, len.to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        body,
    )
        .into_response())
}
