//! Datasets, data requests and the files of the places (policy §13,
//! api.md "Research data"): what `/v1/datasets`, `/v1/data-requests` and
//! `/v1/files` answer, and what the Files and Datasets pages show.

use serde::{Deserialize, Serialize};

/// A dataset: read-only data admins place for labs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DatasetView {
    pub name: String,
    pub description: String,
    /// The labs it is open to; null = every lab.
    pub labs: Option<Vec<String>>,
    /// `FETCHING`, `READY` or `FAILED`.
    pub state: String,
    pub size_bytes: u64,
    pub sha256: Option<String>,
    /// The folder it was registered as, or the URL it was fetched from.
    pub source: String,
    pub created_at: String,
    /// What the fetch did (entries skipped, why it failed); admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_log: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DatasetList {
    pub datasets: Vec<DatasetView>,
}

/// A researcher's request for data by URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DataRequestView {
    pub id: i64,
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
    pub user: String,
    pub lab: String,
    /// `OPEN`, `APPROVED` (fetching), `READY`, `REJECTED` or `FAILED`.
    pub state: String,
    pub reason: String,
    pub decided_by: Option<String>,
    pub decision_reason: Option<String>,
    /// Why it failed.
    pub message: Option<String>,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DataRequestList {
    pub requests: Vec<DataRequestView>,
}

/// One entry of a folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FileEntry {
    pub name: String,
    /// `file`, `dir` or `link`.
    pub kind: String,
    pub size: u64,
    pub modified: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FolderListing {
    pub entries: Vec<FileEntry>,
}

/// The Datasets pages: what the viewer may see, their lab's requests (an
/// admin's: all), and the labs a dataset may be opened to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetsView {
    pub datasets: Vec<DatasetView>,
    pub requests: Vec<DataRequestView>,
    pub labs: Vec<String>,
}
