//! Datasets and data requests (policy §13, api.md "Research data"):
//! read-only data admins place for labs. An admin registers a folder (used
//! as it is) or a URL (fetched into `storage.root/datasets/NAME`); a
//! researcher asks for data by URL with a reason, and an admin approves
//! (the fetch starts, the dataset is open to the requester's lab) or
//! rejects it. Jobs see the datasets open to their lab at
//! `$JPU_DATASETS/NAME`, read-only (the local executor binds them; on
//! Slurm, their lab's view and the folders' readers, `access`); people
//! read them through the files API as themselves.

pub mod access;
pub mod fetch;
pub mod unpack;

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

use app::model::datasets::{DataRequestList, DataRequestView, DatasetList, DatasetView};
use app::msg;
use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use crate::config::storage::StorageSettings;
use crate::db;
use crate::db::datasets::{DatasetRow, RequestRow};
use crate::executor::places::Places;
use crate::services::admin::users::check_name;
use crate::services::{ServiceError, ServiceResult, Services};

/// The most open requests one person may have.
const MAX_OPEN_REQUESTS: i64 = 20;

/// Where a dataset comes from.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Source {
    /// A folder on storage every node mounts, used as it is.
    Path { path: String },
    /// Fetched (http/https), its SHA-256 checked when given.
    Url { url: String, sha256: Option<String> },
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDataset {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The labs it is open to; missing or null = every lab.
    pub labs: Option<Vec<String>>,
    pub source: Source,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetChange {
    /// Some(null) opens it to every lab.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>)]
    pub labs: Option<Option<Vec<String>>>,
    pub description: Option<String>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Vec<String>>>, D::Error> {
    Option::<Vec<String>>::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDataRequest {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rejection {
    pub reason: String,
}

/// `GET /v1/datasets`: those open to the caller's lab (admins: all).
pub async fn list(state: &Services, caller: &Caller) -> ServiceResult<DatasetList> {
    let mut conn = state.db.acquire().await?;
    let admin = caller.user.viewer().is_admin();
    let datasets = db::datasets::list(&mut conn)
        .await?
        .into_iter()
        .filter(|d| admin || open_to(d, &caller.user.lab))
        .map(|d| view(d, admin))
        .collect();
    Ok(DatasetList { datasets })
}

fn labs_of(row: &DatasetRow) -> Option<Vec<String>> {
    row.labs.as_deref().map(|l| serde_json::from_str(l).unwrap_or_default())
}

fn open_to(row: &DatasetRow, lab: &str) -> bool {
    labs_of(row).is_none_or(|labs| labs.iter().any(|l| l == lab))
}

fn view(row: DatasetRow, admin: bool) -> DatasetView {
    DatasetView {
        labs: labs_of(&row),
        name: row.name,
        description: row.description,
        state: row.state,
        size_bytes: row.size_bytes.max(0) as u64,
        sha256: row.sha256,
        source: row.source_path.or(row.source_url).unwrap_or_default(),
        created_at: rfc3339(row.created_at),
        fetch_log: admin.then_some(row.fetch_log),
    }
}

/// A dataset's folder, for a person whose lab it is open to (admins:
/// any), once it is `READY`; otherwise `NOT_FOUND` (a name not open to
/// the lab is not told apart from none).
pub async fn folder_for(state: &Services, caller: &Caller, name: &str) -> ServiceResult<PathBuf> {
    let mut conn = state.db.acquire().await?;
    let row = db::datasets::by_name(&mut conn, name).await?;
    let admin = caller.user.viewer().is_admin();
    match row {
        Some(d) if (admin || open_to(&d, &caller.user.lab)) && d.state == "READY" => Ok(folder_of(state, &d)),
        _ => Err(ServiceError::NotFound(msg!("err-no-dataset", name = name))),
    }
}

fn folder_of(state: &Services, row: &DatasetRow) -> PathBuf {
    match &row.source_path {
        Some(path) => PathBuf::from(path),
        None => Places::new(&state.settings.storage.root).dataset_store().join(&row.name),
    }
}

/// `POST /v1/admin/datasets`.
pub async fn register(state: &Services, admin: &Caller, body: NewDataset) -> ServiceResult<DatasetView> {
    check_name("name", &body.name)?;
    check_text("description", &body.description, 2000)?;
    let labs = check_labs(state, body.labs.as_deref()).await?;
    let (path, url, sha) = match &body.source {
        Source::Path { path } => {
            let folder = std::path::Path::new(path);
            if !folder.is_absolute() || !std::fs::metadata(folder).is_ok_and(|m| m.is_dir()) {
                return Err(ServiceError::field("source.path", msg!("err-dataset-path", path = path.clone())));
            }
            (Some(path.clone()), None, None)
        }
        Source::Url { url, sha256 } => {
            fetch::check_url(url)
                .map_err(|why| ServiceError::field("source.url", msg!("err-file-path", detail = why)))?;
            (None, Some(url.clone()), check_sha(sha256.as_deref())?)
        }
    };
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let id = db::datasets::insert(
        &mut tx,
        &body.name,
        &body.description,
        labs.as_deref(),
        path.as_deref(),
        url.as_deref(),
        sha.as_deref(),
        None,
        now,
    )
    .await
    .map_err(|e| ServiceError::unique(e, msg!("err-dataset-exists", name = body.name.clone())))?;
    db::audit::record(
        &mut tx,
        &admin.user.username,
        "dataset.create",
        Some(&body.name),
        &serde_json::json!({"labs": body.labs, "source": path.as_ref().or(url.as_ref())}),
        now,
    )
    .await?;
    tx.commit().await?;
    if url.is_some() {
        start_fetch(state, id);
    }
    access::changed(state);
    one(state, &body.name).await
}

async fn one(state: &Services, name: &str) -> ServiceResult<DatasetView> {
    let mut conn = state.db.acquire().await?;
    let row = db::datasets::by_name(&mut conn, name).await?;
    row.map(|r| view(r, true)).ok_or_else(|| ServiceError::NotFound(msg!("err-no-dataset", name = name)))
}

/// `PATCH /v1/admin/datasets/{name}`.
pub async fn change(state: &Services, admin: &Caller, name: &str, body: DatasetChange) -> ServiceResult<DatasetView> {
    let row = {
        let mut conn = state.db.acquire().await?;
        db::datasets::by_name(&mut conn, name).await?
    }
    .ok_or_else(|| ServiceError::NotFound(msg!("err-no-dataset", name = name)))?;
    let labs = match &body.labs {
        Some(labs) => Some(check_labs(state, labs.as_deref()).await?),
        None => None,
    };
    if let Some(d) = &body.description {
        check_text("description", d, 2000)?;
    }
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if let Some(labs) = &labs {
        db::datasets::set_labs(&mut tx, row.id, labs.as_deref()).await?;
    }
    if let Some(d) = &body.description {
        db::datasets::set_description(&mut tx, row.id, d).await?;
    }
    db::audit::record(
        &mut tx,
        &admin.user.username,
        "dataset.update",
        Some(name),
        &serde_json::json!({"labs": body.labs, "description": body.description}),
        now,
    )
    .await?;
    tx.commit().await?;
    access::changed(state);
    one(state, name).await
}

/// `DELETE /v1/admin/datasets/{name}`: refused while a running job's lab
/// has it open (the job was started with it in view); a fetched one's
/// folder goes with it.
pub async fn remove(state: &Services, admin: &Caller, name: &str) -> ServiceResult<()> {
    let mut conn = state.db.acquire().await?;
    let row = db::datasets::by_name(&mut conn, name)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-dataset", name = name)))?;
    let running = db::datasets::labs_running(&mut conn).await?;
    drop(conn);
    if let Some(lab) = running.iter().find(|lab| open_to(&row, lab)) {
        return Err(ServiceError::Conflict(msg!("err-dataset-in-use", name = name, lab = lab.clone())));
    }
    if row.state == "FETCHING" {
        return Err(ServiceError::Conflict(msg!("err-dataset-fetching", name = name)));
    }
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    db::datasets::delete(&mut tx, row.id).await?;
    db::audit::record(&mut tx, &admin.user.username, "dataset.delete", Some(name), &serde_json::json!({}), now).await?;
    tx.commit().await?;
    if row.source_url.is_some() {
        let folder = folder_of(state, &row);
        // root's own tree (nobody else writes in it): removed as it is
        let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(folder)).await;
    }
    access::changed(state);
    Ok(())
}

/// `POST /v1/data-requests`.
pub async fn request(state: &Services, caller: &Caller, body: NewDataRequest) -> ServiceResult<DataRequestView> {
    check_name("name", &body.name)?;
    fetch::check_url(&body.url).map_err(|why| ServiceError::field("url", msg!("err-file-path", detail = why)))?;
    let sha = check_sha(body.sha256.as_deref())?;
    check_text("reason", &body.reason, 2000)?;
    if body.reason.trim().is_empty() {
        return Err(ServiceError::field("reason", msg!("err-empty")));
    }
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if db::datasets::open_requests_of(&mut tx, caller.user.id).await? >= MAX_OPEN_REQUESTS {
        return Err(ServiceError::QueueLimit(msg!("err-too-many-requests", max = MAX_OPEN_REQUESTS)));
    }
    let id = db::datasets::insert_request(
        &mut tx,
        &body.name,
        &body.url,
        sha.as_deref(),
        &body.reason,
        caller.user.id,
        caller.user.lab_id,
        now,
    )
    .await?;
    tx.commit().await?;
    request_view(state, id).await
}

async fn request_view(state: &Services, id: i64) -> ServiceResult<DataRequestView> {
    let mut conn = state.db.acquire().await?;
    let row = db::datasets::request(&mut conn, id).await?;
    row.map(request_of).ok_or_else(|| ServiceError::NotFound(msg!("err-no-data-request", id = id)))
}

fn request_of(r: RequestRow) -> DataRequestView {
    DataRequestView {
        id: r.id,
        name: r.name,
        url: r.url,
        sha256: r.sha256,
        user: r.user,
        lab: r.lab,
        state: r.state,
        reason: r.reason,
        decided_by: r.decided_by,
        decision_reason: r.decision_reason,
        message: r.message,
        created_at: rfc3339(r.created_at),
    }
}

/// `GET /v1/data-requests`: the caller's lab's (admins: all).
pub async fn requests(state: &Services, caller: &Caller) -> ServiceResult<DataRequestList> {
    let mut conn = state.db.acquire().await?;
    let lab = (!caller.user.viewer().is_admin()).then_some(caller.user.lab_id);
    let rows = db::datasets::requests(&mut conn, lab).await?;
    Ok(DataRequestList { requests: rows.into_iter().map(request_of).collect() })
}

/// `POST /v1/admin/data-requests/{id}/approve`: the dataset is made, open
/// to the requester's lab, and fetched.
pub async fn approve(state: &Services, admin: &Caller, id: i64) -> ServiceResult<DataRequestView> {
    let req = open_request(state, id).await?;
    let labs = serde_json::to_string(&[&req.lab]).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if !db::datasets::decide(&mut tx, id, "APPROVED", admin.user.id, None, now).await? {
        return Err(ServiceError::Conflict(msg!("err-request-decided", id = id)));
    }
    let dataset = db::datasets::insert(
        &mut tx,
        &req.name,
        &req.reason,
        Some(&labs),
        None,
        Some(&req.url),
        req.sha256.as_deref(),
        Some(id),
        now,
    )
    .await
    .map_err(|e| ServiceError::unique(e, msg!("err-dataset-exists", name = req.name.clone())))?;
    db::audit::record(
        &mut tx,
        &admin.user.username,
        "data_request.approve",
        Some(&id.to_string()),
        &serde_json::json!({"name": req.name, "url": req.url}),
        now,
    )
    .await?;
    crate::db::notifications::data_request_event(&mut tx, req.user_id, id, now).await?;
    tx.commit().await?;
    start_fetch(state, dataset);
    request_view(state, id).await
}

/// `POST /v1/admin/data-requests/{id}/reject`.
pub async fn reject(state: &Services, admin: &Caller, id: i64, body: Rejection) -> ServiceResult<DataRequestView> {
    check_text("reason", &body.reason, 2000)?;
    let req = open_request(state, id).await?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    if !db::datasets::decide(&mut tx, id, "REJECTED", admin.user.id, Some(&body.reason), now).await? {
        return Err(ServiceError::Conflict(msg!("err-request-decided", id = id)));
    }
    db::audit::record(
        &mut tx,
        &admin.user.username,
        "data_request.reject",
        Some(&id.to_string()),
        &serde_json::json!({"name": req.name, "reason": body.reason}),
        now,
    )
    .await?;
    crate::db::notifications::data_request_event(&mut tx, req.user_id, id, now).await?;
    tx.commit().await?;
    request_view(state, id).await
}

async fn open_request(state: &Services, id: i64) -> ServiceResult<RequestRow> {
    let mut conn = state.db.acquire().await?;
    let req = db::datasets::request(&mut conn, id)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-data-request", id = id)))?;
    if req.state != "OPEN" {
        return Err(ServiceError::Conflict(msg!("err-request-decided", id = id)));
    }
    Ok(req)
}

fn check_text(field: &'static str, text: &str, max: usize) -> ServiceResult<()> {
    if text.chars().count() > max {
        return Err(ServiceError::field(field, msg!("err-chars-max", max = max)));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(ServiceError::field(field, msg!("err-printable")));
    }
    Ok(())
}

fn check_sha(sha: Option<&str>) -> ServiceResult<Option<String>> {
    match sha.map(str::trim) {
        None | Some("") => Ok(None),
        Some(s) if s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()) => Ok(Some(s.to_ascii_lowercase())),
        Some(_) => Err(ServiceError::field("sha256", msg!("err-sha256"))),
    }
}

/// Labs as stored (JSON), each one checked to exist.
async fn check_labs(state: &Services, labs: Option<&[String]>) -> ServiceResult<Option<String>> {
    let Some(labs) = labs else { return Ok(None) };
    let mut conn = state.db.acquire().await?;
    let known = db::datasets::lab_names(&mut conn).await?;
    if let Some(missing) = labs.iter().find(|l| !known.contains(l)) {
        return Err(ServiceError::field("labs", msg!("err-no-lab", name = missing.clone())));
    }
    serde_json::to_string(labs).map(Some).map_err(|e| ServiceError::Internal(e.to_string()))
}

/// Fetches every dataset still `FETCHING` (a restart cut them off).
pub async fn resume_fetches(state: &Services) {
    let rows = match state.db.acquire().await {
        Ok(mut conn) => db::datasets::list(&mut conn).await.unwrap_or_default(),
        Err(_) => return,
    };
    for row in rows.into_iter().filter(|r| r.state == "FETCHING") {
        start_fetch(state, row.id);
    }
}

fn start_fetch(state: &Services, id: i64) {
    let state = state.clone();
    tokio::spawn(async move { fetch_one(&state, id).await });
}

/// One fetch, start to end: download beside the datasets, check, unpack,
/// then the folder is moved into place whole, and the dataset and its
/// request say how it went.
async fn fetch_one(state: &Services, id: i64) {
    let row = match state.db.acquire().await {
        Ok(mut conn) => db::datasets::list(&mut conn).await.ok().and_then(|rows| rows.into_iter().find(|r| r.id == id)),
        Err(_) => None,
    };
    let Some(row) = row else { return };
    let settings = &state.settings.storage;
    let outcome = fetch_into(&row, settings).await;
    if outcome.is_ok() {
        // READY means its readers can read it
        if let Err(e) = access::open_fetched(state, &row).await {
            tracing::warn!(error = %e, dataset = row.name, "a fetched dataset stays root's alone");
        }
    }
    let now = now_ms();
    let finished = async {
        let mut tx = db::write_tx(&state.db).await?;
        match &outcome {
            Ok((bytes, sha, log)) => db::datasets::finish(&mut tx, id, "READY", *bytes as i64, Some(sha), log).await?,
            Err(why) => db::datasets::finish(&mut tx, id, "FAILED", 0, None, why).await?,
        }
        if let Some(request) = row.request_id {
            let (state, message) = match &outcome {
                Ok(_) => ("READY", None),
                Err(why) => ("FAILED", Some(why.as_str())),
            };
            db::datasets::set_request_state(&mut tx, request, state, message).await?;
            if let Some(user) = db::datasets::request(&mut tx, request).await?.map(|r| r.user_id) {
                crate::db::notifications::data_request_event(&mut tx, user, request, now).await?;
            }
        }
        tx.commit().await
    };
    if let Err(e) = finished.await {
        tracing::error!(error = %e, dataset = row.name, "cannot record a dataset fetch's end");
    }
    access::changed(state);
    match outcome {
        Ok((bytes, _, _)) => tracing::info!(dataset = row.name, bytes, "dataset fetched"),
        Err(why) => tracing::warn!(dataset = row.name, why, "dataset fetch failed"),
    }
}

async fn fetch_into(row: &DatasetRow, settings: &StorageSettings) -> Result<(u64, String, String), String> {
    let url = row.source_url.clone().ok_or("no URL")?;
    let max = StorageSettings::bytes(settings.max_dataset_gb);
    let places = Places::new(&settings.root);
    let datasets = places.dataset_store();
    let work = datasets.join(format!(".fetch-{}", row.name));
    let prepared = {
        let (top, datasets, work) = (places.datasets(), datasets.clone(), work.clone());
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            use std::os::unix::fs::PermissionsExt;
            std::fs::DirBuilder::new().recursive(true).mode(0o711).create(&top)?;
            // passable, not listable: each folder in it is given to its
            // readers (`access`)
            std::fs::DirBuilder::new().recursive(true).mode(0o711).create(&datasets)?;
            std::fs::set_permissions(&datasets, std::fs::Permissions::from_mode(0o711))?;
            let _ = std::fs::remove_dir_all(&work);
            std::fs::DirBuilder::new().mode(0o700).create(&work)
        })
        .await
    };
    prepared.map_err(|e| e.to_string())?.map_err(|e| format!("cannot prepare {}: {e}", work.display()))?;
    let result = async {
        let download = work.join("download");
        let got = fetch::download(&url, &download, max, settings.fetch_private_addresses).await?;
        if let Some(want) = &row.sha256 {
            if !want.eq_ignore_ascii_case(&got.sha256) {
                return Err(format!("the SHA-256 is {}, not the {want} given", got.sha256));
            }
        }
        let (out, target) = (work.join("out"), datasets.join(&row.name));
        let kind = unpack::Kind::of(&got.url_path);
        let url_path = got.url_path.clone();
        let made = {
            let out = out.clone();
            // root's alone until its readers are set, once it is READY
            tokio::task::spawn_blocking(move || std::fs::DirBuilder::new().mode(0o700).create(out)).await
        };
        made.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let (bytes, log) = if kind == unpack::Kind::Plain {
            let name = out.join(fetch::plain_name(&url_path));
            tokio::fs::rename(&download, &name).await.map_err(|e| e.to_string())?;
            tokio::fs::set_permissions(&name, std::os::unix::fs::PermissionsExt::from_mode(0o644))
                .await
                .map_err(|e| e.to_string())?;
            (tokio::fs::metadata(&name).await.map(|m| m.len()).unwrap_or(0), String::new())
        } else {
            let done = unpack::in_a_process(kind, &download, &out, max).await?;
            (done.bytes, done.log())
        };
        tokio::task::spawn_blocking(move || -> Result<(), String> {
            let _ = std::fs::remove_dir_all(&target);
            std::fs::rename(&out, &target).map_err(|e| format!("cannot move the dataset into place: {e}"))
        })
        .await
        .map_err(|e| e.to_string())??;
        Ok((bytes, got.sha256, log))
    }
    .await;
    let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(work)).await;
    result
}
