//! The console's side of research data (policy §13): a folder's entries
//! for the Files page, the Datasets pages, a data request, and the admin's
//! dataset forms — the same service functions `/v1` calls.

use app::model::admin::AdminAction;
use app::model::datasets::{DataRequestView, DatasetsView, FileEntry, FolderListing};
use app::model::error::ConsoleError;
use app::msg;

use crate::auth::Caller;
use crate::http::console::form::refused;
use crate::services::datasets::{self, DatasetChange, NewDataRequest, NewDataset, Rejection, Source};
use crate::services::files::{self, Found, Place};
use crate::services::{admin, Services};

/// A folder of the viewer's home or lab share, or of a dataset; the
/// datasets' top lists those open to the viewer's lab that are ready.
pub async fn folder(state: &Services, who: &Caller, place: &str, path: &str) -> Result<FolderListing, ConsoleError> {
    let (place, path) = match place {
        "datasets" => {
            let path = path.trim_matches('/');
            let (name, rest) = path.split_once('/').unwrap_or((path, ""));
            if name.is_empty() {
                let listed = datasets::list(state, who).await?;
                let entries = listed
                    .datasets
                    .into_iter()
                    .filter(|d| d.state == "READY")
                    .map(|d| FileEntry { name: d.name, kind: "dir".into(), size: d.size_bytes, modified: d.created_at })
                    .collect();
                return Ok(FolderListing { entries });
            }
            (Place::Dataset(name.to_string()), rest.to_string())
        }
        other => (Place::parse(other)?, path.to_string()),
    };
    match files::get(state, who, place, &path, None).await? {
        Found::Folder(entries) => Ok(FolderListing { entries }),
        Found::File(_) => Err(refused(msg!("err-file-path", detail = "a file, not a folder"))),
    }
}

pub async fn page(state: &Services, who: &Caller) -> Result<DatasetsView, ConsoleError> {
    Ok(DatasetsView {
        datasets: datasets::list(state, who).await?.datasets,
        requests: datasets::requests(state, who).await?.requests,
        labs: if who.user.viewer().is_admin() { admin::lab_names(state).await? } else { Vec::new() },
    })
}

pub async fn request(
    state: &Services,
    who: &Caller,
    name: String,
    url: String,
    sha256: String,
    reason: String,
) -> Result<DataRequestView, ConsoleError> {
    let sha256 = Some(sha256.trim().to_string()).filter(|s| !s.is_empty());
    Ok(datasets::request(
        state,
        who,
        NewDataRequest { name: name.trim().into(), url: url.trim().into(), sha256, reason },
    )
    .await?)
}

/// Comma-separated lab names; none = every lab.
fn labs(text: &str) -> Option<Vec<String>> {
    let labs: Vec<String> = text.split(',').map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
    (!labs.is_empty()).then_some(labs)
}

/// An admin's dataset form, carried out; what was done, in words.
pub async fn act(state: &Services, admin: &Caller, action: AdminAction) -> Result<String, ConsoleError> {
    use AdminAction::*;
    Ok(match action {
        RegisterDataset { name, description, labs: open_to, path, url, sha256 } => {
            let source = match (path.trim(), url.trim()) {
                (p, "") if !p.is_empty() => Source::Path { path: p.into() },
                ("", u) if !u.is_empty() => {
                    Source::Url { url: u.into(), sha256: Some(sha256.trim().to_string()).filter(|s| !s.is_empty()) }
                }
                _ => return Err(refused(msg!("err-dataset-source").on("path"))),
            };
            let made = datasets::register(
                state,
                admin,
                NewDataset { name: name.trim().into(), description, labs: labs(&open_to), source },
            )
            .await?;
            format!("Dataset {} registered ({}).", made.name, made.state)
        }
        SetDatasetLabs { name, labs: open_to } => {
            let change = DatasetChange { labs: Some(labs(&open_to)), description: None };
            let changed = datasets::change(state, admin, &name, change).await?;
            format!(
                "Dataset {} is open to {}.",
                changed.name,
                changed.labs.map_or("every lab".into(), |l| l.join(", "))
            )
        }
        DeleteDataset { name } => {
            datasets::remove(state, admin, &name).await?;
            format!("Dataset {name} deleted.")
        }
        DecideDataRequest { id, approve, reason } => {
            let id: i64 = id.trim().parse().map_err(|_| refused(msg!("err-no-data-request", id = id.clone())))?;
            let decided = if approve {
                datasets::approve(state, admin, id).await?
            } else {
                datasets::reject(state, admin, id, Rejection { reason }).await?
            };
            format!("Data request {} is {}.", decided.id, decided.state)
        }
        _ => return Err(refused(msg!("err-internal"))),
    })
}
