//! Files through the site (api.md "Research data", policy §13): list,
//! download, upload, new folder and delete in a person's home and lab
//! share, and reads of the datasets open to their lab. The rules live
//! here — which folder a place is, who the operation runs as, the upload
//! limit and the quota, usage counted at once — and each operation runs
//! in the executor's file helper as the person (`executor::files`).

use std::path::PathBuf;

use app::msg;
use futures_util::Stream;
use hyper::body::Bytes;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::config::storage::StorageSettings;
use crate::db;
use crate::executor::files::client::{self, Bytestream};
use crate::executor::files::{segments, ByteRange, Entry, Failure, Identity, Op, Reply, Request};
use crate::executor::places::Places;
use crate::services::{ServiceError, ServiceResult, Services};

/// The body of an operation that sends none.
type NoBody = futures_util::stream::Empty<Result<Bytes, std::io::Error>>;

/// Where a path lies.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    Home,
    Lab,
    /// A dataset's folder, read-only.
    Dataset(String),
}

impl Place {
    /// `home` or `lab` from a URL.
    pub fn parse(text: &str) -> ServiceResult<Self> {
        match text {
            "home" => Ok(Place::Home),
            "lab" => Ok(Place::Lab),
            other => Err(ServiceError::NotFound(msg!("err-file-place", place = other.to_string()))),
        }
    }

    fn usage_key(&self, caller: &Caller) -> Option<String> {
        match self {
            Place::Home => Some(format!("home/{}", caller.user.username)),
            Place::Lab => Some(format!("labs/{}", caller.user.lab)),
            Place::Dataset(_) => None,
        }
    }
}

/// A file's bytes on their way out.
pub struct Download {
    pub size: u64,
    pub start: u64,
    pub len: u64,
    /// Whether a `Range` was asked for (and so this is a part).
    pub partial: bool,
    pub modified: String,
    pub bytes: Bytestream,
}

/// What a path held.
pub enum Found {
    Folder(Vec<Entry>),
    File(Download),
}

/// `GET /v1/files/{place}/{path}` (and a dataset's files).
pub async fn get(
    state: &Services,
    caller: &Caller,
    place: Place,
    path: &str,
    range: Option<ByteRange>,
) -> ServiceResult<Found> {
    let at = ready_place(state, caller, &place).await?;
    let (reply, bytes) = run(at, path, Op::Get { range }, None::<NoBody>).await?;
    match (reply, bytes) {
        (Reply::Listing { entries }, _) => Ok(Found::Folder(entries)),
        (Reply::File { size, start, len, modified }, Some(bytes)) => {
            Ok(Found::File(Download { size, start, len, partial: range.is_some(), modified, bytes }))
        }
        (other, _) => Err(unexpected(other)),
    }
}

/// `PUT /v1/files/{place}/{path}`: `body` streamed to disk. Refused before
/// a byte is written when the place is over its quota already; cut off at
/// `storage.max_upload_mb` (`TOO_LARGE`) or at the quota's room
/// (`QUOTA_EXCEEDED`), leaving nothing behind. Returns the bytes written.
pub async fn put<S, E>(
    state: &Services,
    caller: &Caller,
    place: Place,
    path: &str,
    declared: Option<u64>,
    body: S,
) -> ServiceResult<u64>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let settings = &state.settings.storage;
    let max = settings.max_upload_mb.saturating_mul(1_000_000);
    if declared.is_some_and(|n| n > max) {
        return Err(too_large(max));
    }
    let key = writable(&place, caller)?;
    let (used, quota) = usage(state, &key, &place).await?;
    if used > quota {
        return Err(over_quota(&place, used, quota));
    }
    let at = ready_place(state, caller, &place).await?;
    let room = quota - used;
    let (reply, _) = run(at, path, Op::Put { max, room }, Some(body)).await?;
    match reply {
        Reply::Written { bytes, stored, replaced } => {
            count(state, &key, stored as i64 - replaced as i64).await?;
            Ok(bytes)
        }
        Reply::Failed { code: Failure::TooLarge, .. } => Err(too_large(max)),
        Reply::Failed { code: Failure::QuotaExceeded, .. } => Err(over_quota(&place, used, quota)),
        other => Err(unexpected(other)),
    }
}

/// `POST /v1/files/{place}/{path}?mkdir`.
pub async fn mkdir(state: &Services, caller: &Caller, place: Place, path: &str) -> ServiceResult<()> {
    writable(&place, caller)?;
    let at = ready_place(state, caller, &place).await?;
    match run(at, path, Op::Mkdir, None::<NoBody>).await? {
        (Reply::Made, _) => Ok(()),
        (other, _) => Err(unexpected(other)),
    }
}

/// `DELETE /v1/files/{place}/{path}`: a file, a link or an empty folder.
pub async fn delete(state: &Services, caller: &Caller, place: Place, path: &str) -> ServiceResult<()> {
    let key = writable(&place, caller)?;
    let at = ready_place(state, caller, &place).await?;
    match run(at, path, Op::Delete, None::<NoBody>).await? {
        (Reply::Deleted { bytes }, _) => count(state, &key, -(bytes as i64)).await,
        (other, _) => Err(unexpected(other)),
    }
}

fn writable(place: &Place, caller: &Caller) -> ServiceResult<String> {
    place.usage_key(caller).ok_or_else(|| ServiceError::Forbidden(msg!("err-dataset-read-only")))
}

/// The place's folder, made (as a job start makes it) when missing, and
/// who the operation runs as.
async fn ready_place(state: &Services, caller: &Caller, place: &Place) -> ServiceResult<(PathBuf, Option<Identity>)> {
    let lab_gid = {
        let mut conn = state.db.acquire().await?;
        db::lab_gids::lab_gid(&mut conn, caller.user.lab_id).await?
    };
    let who = identity(caller, lab_gid)?;
    if let Place::Dataset(name) = place {
        return Ok((crate::services::datasets::folder_for(state, caller, name).await?, who));
    }
    let places = Places::new(&state.settings.storage.root);
    let job_places = places
        .of_job(&caller.user.username, &caller.user.lab, lab_gid.map(|g| g as u32))
        .ok_or_else(|| ServiceError::Internal("a user or lab name that is no path component".into()))?;
    let owner = who.as_ref().map(|w| (w.uid, w.gid));
    let folder = if *place == Place::Home { job_places.home.clone() } else { job_places.lab_dir.clone() };
    let made = folder.clone();
    tokio::task::spawn_blocking(move || job_places.prepare(owner))
        .await
        .map_err(|e| ServiceError::Internal(e.to_string()))?
        .map_err(|e| ServiceError::Internal(format!("cannot make {}: {e}", made.display())))?;
    // the lab's gid moved while the places were readied (a sign-in): the
    // share (readied with the home too) is never left with the gid
    // another lab may now hold
    {
        let now = db::lab_gids::lab_gid(&mut state.db.acquire().await?, caller.user.lab_id).await?;
        if now != lab_gid {
            let lab = caller.user.lab.clone();
            let to = now.and_then(|g| u32::try_from(g).ok());
            tokio::task::spawn_blocking(move || places.set_share_group(&lab, to))
                .await
                .map_err(|e| ServiceError::Internal(e.to_string()))?
                .map_err(|e| ServiceError::Internal(format!("cannot regroup the lab share: {e}")))?;
        }
    }
    Ok((folder, who))
}

/// Who a file operation runs as: the person's uid, primary gid and groups
/// with their lab's gid (as their jobs run); `None` when the server is not
/// root (it can be nobody else).
fn identity(caller: &Caller, lab_gid: Option<i64>) -> ServiceResult<Option<Identity>> {
    if !nix::unistd::Uid::effective().is_root() {
        return Ok(None);
    }
    let user = &caller.user;
    let uid = user.unix_uid.or(user.allocated_uid).filter(|u| *u > 0 && *u < i64::from(u32::MAX));
    let uid = uid.ok_or_else(|| ServiceError::Conflict(msg!("err-file-no-uid", user = user.username.clone())))? as u32;
    let gid = user.unix_gid.filter(|g| *g > 0).map_or(uid, |g| g as u32);
    let groups = user
        .unix_groups
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .filter_map(|g| g.trim().parse::<u32>().ok())
        .chain(lab_gid.map(|g| g as u32))
        .filter(|g| *g != 0)
        .collect();
    Ok(Some(Identity { uid, gid, groups }))
}

async fn run<S, E>(
    (base, who): (PathBuf, Option<Identity>),
    path: &str,
    op: Op,
    body: Option<S>,
) -> ServiceResult<(Reply, Option<Bytestream>)>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let parts = segments(path).map_err(|why| ServiceError::Validation(msg!("err-file-path", detail = why)))?;
    let helper = crate::executor::enter::helper()
        .ok_or_else(|| ServiceError::Internal("the jpu-share binary (file helper) is not found".into()))?;
    let req = Request { base, path: parts, who, op };
    let (reply, bytes) = client::call(&helper, &req, body).await.map_err(ServiceError::Internal)?;
    match reply {
        Reply::Failed { code, message } if !matches!(code, Failure::TooLarge | Failure::QuotaExceeded) => {
            Err(failed(code, path, message))
        }
        reply => Ok((reply, bytes)),
    }
}

fn failed(code: Failure, path: &str, message: String) -> ServiceError {
    let path = path.to_string();
    match code {
        Failure::NotFound => ServiceError::NotFound(msg!("err-file-not-found", path = path)),
        Failure::Validation => ServiceError::Validation(msg!("err-file-path", detail = message)),
        Failure::Forbidden => ServiceError::Forbidden(msg!("err-file-forbidden", path = path, detail = message)),
        Failure::Conflict => ServiceError::Conflict(msg!("err-file-conflict", detail = message)),
        Failure::Range => ServiceError::RangeNotSatisfiable(msg!("err-file-range", detail = message)),
        Failure::TooLarge | Failure::QuotaExceeded | Failure::Internal => ServiceError::Internal(message),
    }
}

fn unexpected(reply: Reply) -> ServiceError {
    ServiceError::Internal(format!("the file helper answered {reply:?}"))
}

fn too_large(max: u64) -> ServiceError {
    ServiceError::TooLarge(msg!("err-file-too-large", max = max))
}

fn over_quota(place: &Place, used: u64, quota: u64) -> ServiceError {
    let what = if *place == Place::Home { "home" } else { "lab share" };
    ServiceError::QuotaExceeded(msg!("err-file-quota", place = what, used = used, quota = quota))
}

/// A place's usage as last counted, and its quota.
async fn usage(state: &Services, key: &str, place: &Place) -> ServiceResult<(u64, u64)> {
    let mut conn = state.db.acquire().await?;
    let used = db::storage::usage_of(&mut conn, key).await?.map_or(0, |(b, _)| b.max(0) as u64);
    let gb =
        if *place == Place::Home { state.settings.storage.home_quota_gb } else { state.settings.storage.lab_quota_gb };
    Ok((used, StorageSettings::bytes(gb)))
}

/// Uploads and deletes count at once (api.md); the next scan measures
/// what is really on disk.
async fn count(state: &Services, key: &str, delta: i64) -> ServiceResult<()> {
    let mut tx = db::write_tx(&state.db).await?;
    db::storage::add_usage(&mut tx, key, delta, now_ms()).await?;
    tx.commit().await?;
    Ok(())
}
