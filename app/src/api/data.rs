//! The Files and Datasets pages' server functions (policy §13): a
//! folder's entries (uploads, downloads, new folders and deletes go to
//! `/v1/files` from the page itself, with progress), and the datasets with
//! the requests (whose forms post to `/v1` too).

use crate::model::datasets::{DatasetsView, FolderListing};
use crate::model::error::ConsoleError;
use leptos::prelude::*;

/// `place`: `home`, `lab` or `datasets` (whose first path component is
/// the dataset; none = the datasets open to the viewer's lab).
#[server]
pub async fn list_folder(place: String, path: String) -> Result<FolderListing, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.folder(&who, place, path).await.map_err(answer)
}

#[server]
pub async fn datasets_page() -> Result<DatasetsView, ConsoleError> {
    use crate::api::backend::*;
    let (backend, who) = signed_in().await?;
    backend.datasets_page(&who).await.map_err(answer)
}
