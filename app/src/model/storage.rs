//! What a person's places hold against their quotas (policy §13,
//! `GET /v1/me/storage`): shown on the dashboard and the account page.

use serde::{Deserialize, Serialize};

/// One place: where it is, what it holds, what it may.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PlaceUsage {
    pub path: String,
    pub used_bytes: u64,
    pub quota_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StorageView {
    pub home: PlaceUsage,
    pub lab: PlaceUsage,
    /// When the older of the two was last measured (RFC 3339); null when
    /// neither has been yet.
    pub measured_at: Option<String>,
}
