//! The console's side of research data (policy §13): a folder's entries
//! for the Files page and the Datasets pages' data — the same service
//! functions `/v1` calls (the pages' forms post to `/v1` itself).

use app::model::datasets::{DatasetsView, FileEntry, FolderListing};
use app::model::error::ConsoleError;
use app::msg;

use crate::auth::Caller;
use crate::http::console::form::refused;
use crate::services::datasets;
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
