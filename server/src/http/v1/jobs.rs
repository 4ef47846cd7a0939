//! /v1/jobs: submit, list, get, cancel, logs (offsets and Server-Sent
//! Events) and output files. Handlers are thin: state, one call, map.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Json;
use futures_util::Stream;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::http::error::ApiError;
use crate::http::extract::{ApiJson, ApiPath, ApiQuery, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::jobs::{
    self,
    input::{SubmitBody, ValidSubmit},
    output, reading, ListQuery,
};
use crate::state::AppState;
use app::model::views::{FileEntry, JobPage, LogChunk};
use app::model::{ArrayJobs, JobView, Submitted};

/// How often a log stream looks for new output.
const STREAM_POLL: Duration = Duration::from_millis(250);

pub fn api() -> OpenApiRouter<AppState> {
    // a file path may have slashes: axum's catch-all serves it, the
    // document names it as one `{path}` parameter
    let mut api = OpenApiRouter::new()
        .routes(routes!(submit_job, list_jobs))
        .routes(routes!(get_job))
        .routes(routes!(cancel_job))
        .routes(routes!(cancel_array))
        .routes(routes!(job_logs))
        .routes(routes!(job_log_stream))
        .routes(routes!(job_files))
        .route("/jobs/{id}/files/{*path}", get(job_file));
    {
        use utoipa::Path as _;
        let doc = &mut api.get_openapi_mut().paths;
        doc.add_path_operation(__path_job_file::path(), __path_job_file::methods(), __path_job_file::operation());
    }
    api
}

/// Submits a job (a bash script body) to the queue.
#[utoipa::path(post, path = "/jobs", tag = "jobs", request_body = SubmitBody, security(("bearer" = [])),
    responses(
        (status = 201, description = "queued: the job, or for an array `{array_id, jobs}`", body = Submitted),
        (status = 404, description = "a dependency names no job of the caller's lab", body = ErrorBody),
        (status = 400, description = "malformed JSON", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 413, description = "body over 256 KiB", body = ErrorBody),
        (status = 422, description = "a field out of range (VALIDATION) or no placement can ever fit it (NO_FIT_PLACEMENT)", body = ErrorBody),
        (status = 429, description = "too many unfinished jobs (QUEUE_LIMIT)", body = ErrorBody),
        (status = 503, description = "maintenance (SERVICE_MAINTENANCE)", body = ErrorBody),
    ))]
async fn submit_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiJson(body): ApiJson<SubmitBody>,
) -> Result<(StatusCode, Json<Submitted>), ApiError> {
    let job = ValidSubmit::try_from(body).map_err(crate::services::ServiceError::from)?;
    Ok((StatusCode::CREATED, Json(jobs::submit(&state, &caller, job).await?)))
}

/// Jobs newest first: the caller's lab's (all for admins), filtered and paged.
#[utoipa::path(get, path = "/jobs", tag = "jobs", params(ListQuery), security(("bearer" = [])),
    responses(
        (status = 200, body = JobPage),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 422, description = "a parameter out of range", body = ErrorBody),
    ))]
async fn list_jobs(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<JobPage>, ApiError> {
    Ok(Json(jobs::list(&state, &caller, &q).await?))
}

/// One job with its attempts.
#[utoipa::path(get, path = "/jobs/{id}", tag = "jobs", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 200, body = JobView),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
    ))]
async fn get_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(jobs::get(&state, &caller, id).await?))
}

/// Cancels every unfinished element of an array.
#[utoipa::path(post, path = "/arrays/{id}/cancel", tag = "jobs", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 202, description = "every element as it now stands", body = ArrayJobs),
        (status = 403, description = "a colleague's array", body = ErrorBody),
        (status = 409, description = "no element is unfinished", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such array, or another lab's", body = ErrorBody),
    ))]
async fn cancel_array(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<(StatusCode, Json<ArrayJobs>), ApiError> {
    Ok((StatusCode::ACCEPTED, Json(jobs::arrays::cancel(&state, &caller, id).await?)))
}

/// Cancels a job: queued ones end at once, running ones get SIGTERM, the grace, then SIGKILL.
#[utoipa::path(post, path = "/jobs/{id}/cancel", tag = "jobs", params(("id" = i64, Path)), security(("bearer" = [])),
    responses(
        (status = 202, description = "CANCELLING, or CANCELLED if it was queued", body = JobView),
        (status = 403, description = "a colleague's job", body = ErrorBody),
        (status = 409, description = "the job already ended", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
    ))]
async fn cancel_job(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    Ok((StatusCode::ACCEPTED, Json(jobs::cancel(&state, &caller, id).await?)))
}

/// One event of a log stream.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // a schema only; the stream writes the events
struct LogEvent {
    /// `log` (new output), `end` (the job ended; data is its state) or
    /// `error`.
    #[schema(pattern = "^(log|end|error)$")]
    event: String,
    data: String,
    /// For `log`: the offset after this output (resume with `Last-Event-ID`).
    id: Option<String>,
}

#[derive(Deserialize, IntoParams)]
struct LogQuery {
    /// Byte offset to read from (the previous chunk's `next_offset`).
    offset: Option<u64>,
}

/// Up to 256 KiB of the job's output from `offset`.
#[utoipa::path(get, path = "/jobs/{id}/logs", tag = "jobs", params(("id" = i64, Path), LogQuery), security(("bearer" = [])),
    responses(
        (status = 200, body = LogChunk),
        (status = 403, description = "a colleague's job: output is the owner's", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
        (status = 422, description = "offset past the end of the log", body = ErrorBody),
    ))]
async fn job_logs(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Json<LogChunk>, ApiError> {
    Ok(Json(reading::log(&state, &caller, id, q.offset.unwrap_or(0)).await?))
}

/// New output as `log` events (the event id is the next offset, so a
/// reconnecting client resumes with `Last-Event-ID`), then one `end`
/// event with the job's final state.
#[utoipa::path(get, path = "/jobs/{id}/logs/stream", tag = "jobs", params(("id" = i64, Path), LogQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "Server-Sent Events: `log` (id = next offset), then one `end` with the final state",
            content_type = "text/event-stream", body = LogEvent),
        (status = 403, description = "a colleague's job: output is the owner's", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
        (status = 422, description = "offset past the end of the log", body = ErrorBody),
    ))]
async fn job_log_stream(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<LogQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let job = reading::readable(&state, &caller, id).await?;
    let resume = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let offset = resume.or(q.offset).unwrap_or(0);
    output::read_log(&reading::layout(&state), &job, offset)?; // a bad offset is an error now, not an empty stream
    let stream = futures_util::stream::unfold(Some((state, caller, job, offset)), |step| async move {
        let (state, caller, mut job, offset) = step?;
        loop {
            let chunk = match output::read_log(&reading::layout(&state), &job, offset) {
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
            // a revoked token, a password change or reset, a disabled user:
            // the stream ends with the credentials it was opened with
            if !matches!(crate::auth::still_valid(&state.db, &caller, crate::clock::now_ms()).await, Ok(true)) {
                return Some((Ok(Event::default().event("error").data("your sign-in has ended")), None));
            }
            match jobs::get(&state, &caller, job.id).await {
                Ok(fresh) => job = fresh,
                Err(e) => return Some((Ok(Event::default().event("error").data(e.to_string())), None)),
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
struct FilesQuery {
    /// Files per page, 1 to 10,000 (default 1,000).
    limit: Option<i64>,
    /// The last path of the previous page: the page starts after it.
    after: Option<String>,
}

/// The files in the job's output directory, by path, a page at a time
/// (the `X-Total-Count` header says how many there are).
#[utoipa::path(get, path = "/jobs/{id}/files", tag = "jobs", params(("id" = i64, Path), FilesQuery), security(("bearer" = [])),
    responses(
        (status = 200, body = Vec<FileEntry>, headers(("x-total-count" = u64, description = "files listed in all pages"))),
        (status = 422, description = "`limit` out of range", body = ErrorBody),
        (status = 403, description = "a colleague's job: output is the owner's", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
    ))]
async fn job_files(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(id): ApiPath<i64>,
    ApiQuery(q): ApiQuery<FilesQuery>,
) -> Result<Response, ApiError> {
    let (files, total) = reading::files(&state, &caller, id, q.after, q.limit).await?;
    Ok(([("x-total-count", total.to_string())], Json(files)).into_response())
}

/// One output file's bytes; `..`, absolute paths and symlinks out of the directory are refused.
#[utoipa::path(get, path = "/jobs/{id}/files/{path}", tag = "jobs",
    params(("id" = i64, Path), ("path" = String, Path, description = "relative to the output directory; may contain `/`")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "the file", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 403, description = "a colleague's job, or a symlink out of the directory", body = ErrorBody),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 404, description = "no such job, or another lab's", body = ErrorBody),
        (status = 422, description = "`..` or an absolute path", body = ErrorBody),
    ))]
async fn job_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((id, path)): ApiPath<(i64, String)>,
) -> Result<Response, ApiError> {
    let download = reading::file(&state, &caller, id, path).await?;
    let (len, name) = (download.len, download.name.clone());
    let mut file = tokio::fs::File::from_std(download.file);
    file.seek(std::io::SeekFrom::Start(download.start))
        .await
        .map_err(|e| ApiError::Internal(format!("reading file: {e}")))?;
    let body = Body::from_stream(tokio_util::io::ReaderStream::new(file.take(len)));
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, len.to_string()),
            (header::CONTENT_DISPOSITION, app::model::content_disposition(&name)),
        ],
        body,
    )
        .into_response())
}
