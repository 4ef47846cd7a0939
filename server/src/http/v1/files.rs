//! `/v1/files/{place}/{path}` and a dataset's files (api.md "Research
//! data"): list, download (`Range`), upload (streamed), new folder,
//! delete. The rules are in `services::files`; a path may have slashes
//! (axum's catch-all serves it, the document names it as one `{path}`),
//! and the place's top is `/v1/files/{place}/`.

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Json;
use futures_util::TryStreamExt;
use utoipa_axum::router::OpenApiRouter;

use crate::executor::files::ByteRange;
use crate::http::error::ApiError;
use crate::http::extract::{ApiPath, AuthUser};
use crate::http::openapi::ErrorBody;
use crate::services::files::{self, Found, Place};
use crate::state::AppState;
use app::model::datasets::FolderListing;

pub fn api() -> OpenApiRouter<AppState> {
    let mut api = OpenApiRouter::new()
        .route("/files/{place}/{*path}", get(get_file).put(put_file).post(make_folder).delete(delete_file))
        .route("/files/{place}/", get(get_top))
        .route("/files/{place}", get(get_top))
        .route("/datasets/{name}/files/{*path}", get(get_dataset_file))
        .route("/datasets/{name}/files/", get(get_dataset_top))
        .route("/datasets/{name}/files", get(get_dataset_top));
    {
        use utoipa::Path as _;
        let doc = &mut api.get_openapi_mut().paths;
        doc.add_path_operation(__path_get_file::path(), __path_get_file::methods(), __path_get_file::operation());
        doc.add_path_operation(__path_put_file::path(), __path_put_file::methods(), __path_put_file::operation());
        doc.add_path_operation(
            __path_make_folder::path(),
            __path_make_folder::methods(),
            __path_make_folder::operation(),
        );
        doc.add_path_operation(
            __path_delete_file::path(),
            __path_delete_file::methods(),
            __path_delete_file::operation(),
        );
        doc.add_path_operation(
            __path_get_dataset_file::path(),
            __path_get_dataset_file::methods(),
            __path_get_dataset_file::operation(),
        );
    }
    api
}

/// A folder's entries, or a file's bytes (`Range: bytes=…` honoured: 206).
#[utoipa::path(get, path = "/files/{place}/{path}", tag = "files",
    params(("place" = String, Path, description = "`home` or `lab`"),
           ("path" = String, Path, description = "inside the place; may contain `/`; empty = its top")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "a folder's entries (JSON), or a file's bytes", body = FolderListing),
        (status = 206, description = "the part of the file the Range asked for", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "the person may not read it", body = ErrorBody),
        (status = 404, description = "no such file or folder, or no such place", body = ErrorBody),
        (status = 409, description = "the person has no unix uid", body = ErrorBody),
        (status = 416, description = "the range lies outside the file", body = ErrorBody),
        (status = 422, description = "`..`, an absolute path or a link in the path", body = ErrorBody),
    ))]
async fn get_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((place, path)): ApiPath<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let place = Place::parse(&place)?;
    Ok(found(files::get(&state, &caller, place, &path, range(&headers)).await?, &path))
}

async fn get_top(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(place): ApiPath<String>,
) -> Result<Response, ApiError> {
    let place = Place::parse(&place)?;
    Ok(found(files::get(&state, &caller, place, "", None).await?, ""))
}

/// Uploads the body as the file (`201`); the folder it goes in must
/// exist. Streamed to disk, never held in memory.
#[utoipa::path(put, path = "/files/{place}/{path}", tag = "files",
    params(("place" = String, Path, description = "`home` or `lab`"), ("path" = String, Path)),
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "written", body = Written),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "the person may not write there", body = ErrorBody),
        (status = 404, description = "the folder it goes in does not exist", body = ErrorBody),
        (status = 409, description = "a folder of that name (CONFLICT), or the place is over its quota (QUOTA_EXCEEDED)", body = ErrorBody),
        (status = 413, description = "larger than storage.max_upload_mb (TOO_LARGE); nothing is kept", body = ErrorBody),
        (status = 422, description = "`..`, an absolute path or a link in the path", body = ErrorBody),
    ))]
async fn put_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((place, path)): ApiPath<(String, String)>,
    request: Request,
) -> Result<(StatusCode, Json<Written>), ApiError> {
    let place = Place::parse(&place)?;
    let declared =
        request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let body = request.into_body().into_data_stream().map_err(|e| e.to_string());
    let bytes = files::put(&state, &caller, place, &path, declared, body).await?;
    Ok((StatusCode::CREATED, Json(Written { bytes })))
}

/// What an upload wrote.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct Written {
    bytes: u64,
}

#[derive(serde::Deserialize)]
struct MkdirQuery {
    mkdir: Option<String>,
}

/// `?mkdir`: makes the folder (`201`); its parent must exist.
#[utoipa::path(post, path = "/files/{place}/{path}", tag = "files",
    params(("place" = String, Path, description = "`home` or `lab`"), ("path" = String, Path),
           ("mkdir" = Option<String>, Query, description = "present: make a folder")),
    security(("bearer" = [])),
    responses(
        (status = 201, description = "made"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "the person may not write there", body = ErrorBody),
        (status = 404, description = "the parent does not exist", body = ErrorBody),
        (status = 409, description = "it exists already", body = ErrorBody),
        (status = 422, description = "no `?mkdir`, `..`, an absolute path or a link in the path", body = ErrorBody),
    ))]
async fn make_folder(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((place, path)): ApiPath<(String, String)>,
    Query(q): Query<MkdirQuery>,
) -> Result<StatusCode, ApiError> {
    let place = Place::parse(&place)?;
    if q.mkdir.is_none() {
        return Err(ApiError::Validation("POST on a path makes a folder: add `?mkdir`".into()));
    }
    files::mkdir(&state, &caller, place, &path).await?;
    Ok(StatusCode::CREATED)
}

/// Deletes a file, a link or an empty folder (`204`).
#[utoipa::path(delete, path = "/files/{place}/{path}", tag = "files",
    params(("place" = String, Path, description = "`home` or `lab`"), ("path" = String, Path)),
    security(("bearer" = [])),
    responses(
        (status = 204, description = "deleted"),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "the person may not delete it", body = ErrorBody),
        (status = 404, description = "no such file or folder", body = ErrorBody),
        (status = 409, description = "a folder that is not empty", body = ErrorBody),
        (status = 422, description = "`..`, an absolute path or a link in the path", body = ErrorBody),
    ))]
async fn delete_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((place, path)): ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let place = Place::parse(&place)?;
    files::delete(&state, &caller, place, &path).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A dataset's folder or file, read like `/v1/files`.
#[utoipa::path(get, path = "/datasets/{name}/files/{path}", tag = "datasets",
    params(("name" = String, Path), ("path" = String, Path, description = "inside the dataset; may contain `/`")),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "a folder's entries (JSON), or a file's bytes", body = FolderListing),
        (status = 206, description = "the part of the file the Range asked for", content_type = "application/octet-stream", body = Vec<u8>),
        (status = 401, description = "not signed in", body = ErrorBody),
        (status = 403, description = "the person may not read it (a registered folder's own permissions)", body = ErrorBody),
        (status = 409, description = "the person has no unix uid", body = ErrorBody),
        (status = 404, description = "no such dataset open to the caller's lab, or no such path in it", body = ErrorBody),
        (status = 416, description = "the range lies outside the file", body = ErrorBody),
        (status = 422, description = "`..`, an absolute path or a link in the path", body = ErrorBody),
    ))]
async fn get_dataset_file(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath((name, path)): ApiPath<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    Ok(found(files::get(&state, &caller, Place::Dataset(name), &path, range(&headers)).await?, &path))
}

async fn get_dataset_top(
    State(state): State<AppState>,
    AuthUser(caller): AuthUser,
    ApiPath(name): ApiPath<String>,
) -> Result<Response, ApiError> {
    Ok(found(files::get(&state, &caller, Place::Dataset(name), "", None).await?, ""))
}

fn found(found: Found, path: &str) -> Response {
    match found {
        Found::Folder(entries) => Json(FolderListing { entries }).into_response(),
        Found::File(file) => {
            let name = path.rsplit('/').next().unwrap_or("download");
            let mut headers = vec![
                (header::CONTENT_TYPE, "application/octet-stream".to_string()),
                (header::CONTENT_LENGTH, file.len.to_string()),
                (header::CONTENT_DISPOSITION, app::model::content_disposition(name)),
                (header::ACCEPT_RANGES, "bytes".to_string()),
                (header::LAST_MODIFIED, file.modified.clone()),
            ];
            let status = if file.partial {
                let last = (file.start + file.len).saturating_sub(1);
                headers.push((header::CONTENT_RANGE, format!("bytes {}-{last}/{}", file.start, file.size)));
                StatusCode::PARTIAL_CONTENT
            } else {
                StatusCode::OK
            };
            let mut response = (status, Body::from_stream(file.bytes)).into_response();
            for (name, value) in headers {
                if let Ok(value) = value.parse() {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        }
    }
}

/// One `bytes=` range; several, or one that does not parse, are ignored
/// (the whole file is sent, as RFC 9110 allows).
fn range(headers: &HeaderMap) -> Option<ByteRange> {
    let spec = headers.get(header::RANGE)?.to_str().ok()?.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    match (a.is_empty(), b.is_empty()) {
        (true, false) => b.parse().ok().map(ByteRange::Last),
        (false, true) => a.parse().ok().map(|a| ByteRange::From(a, None)),
        (false, false) => Some(ByteRange::From(a.parse().ok()?, Some(b.parse().ok()?))),
        (true, true) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_or_are_ignored() {
        let of = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::RANGE, v.parse().unwrap());
            range(&h)
        };
        assert_eq!(of("bytes=0-99"), Some(ByteRange::From(0, Some(99))));
        assert_eq!(of("bytes=100-"), Some(ByteRange::From(100, None)));
        assert_eq!(of("bytes=-5"), Some(ByteRange::Last(5)));
        for ignored in ["bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=a-b", "bytes=1"] {
            assert_eq!(of(ignored), None, "{ignored}");
        }
    }
}
