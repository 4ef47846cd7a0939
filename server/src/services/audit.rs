//! The audit log as admins read it: every admin action, newest first, a
//! page at a time (REST) or the latest few (the console's admin page).

use app::msg;
use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::rfc3339;
use crate::db;
use crate::services::{ServiceError, ServiceResult, Services};

/// Entries per page: the default and the most one request may ask for.
pub const DEFAULT_PAGE: i64 = 100;
pub const MAX_PAGE: i64 = 1000;

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntry {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; null at the end.
    pub next: Option<i64>,
}

/// `limit` entries (1–1000, default 100) older than `before`.
pub async fn page(state: &Services, before: Option<i64>, limit: Option<i64>) -> ServiceResult<AuditPage> {
    let limit = limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ServiceError::field("limit", msg!("err-range", min = 1u32, max = MAX_PAGE, got = limit)));
    }
    let rows = db::audit::list(&mut state.db.acquire().await?, before.unwrap_or(i64::MAX), limit).await?;
    let next = (rows.len() as i64 == limit).then(|| rows.last().map(|r| r.id)).flatten();
    let entries = rows
        .into_iter()
        .map(|r| AuditEntry {
            id: r.id,
            at: rfc3339(r.at_ms),
            actor: r.actor,
            action: r.action,
            target: r.target,
            detail: serde_json::from_str(&r.detail).unwrap_or_else(|_| serde_json::json!({})),
        })
        .collect();
    Ok(AuditPage { entries, next })
}
