//! The audit log of admin actions (api.md: every admin action is recorded).

use db_macros::dual;

use super::AsConn;
use super::WriteTx;

#[derive(Debug, Clone, PartialEq)]
pub struct AuditRow {
    pub id: i64,
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    pub detail: String,
}

#[dual]
pub async fn record(
    conn: &mut WriteTx,
    actor: &str,
    action: &str,
    target: Option<&str>,
    detail: &serde_json::Value,
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    let detail = detail.to_string();
    sqlx::query!(
        "INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)",
        now_ms,
        actor,
        action,
        target,
        detail
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Newest first, at most `limit` entries with id below `before`.
#[dual]
pub async fn list(conn: &mut impl AsConn, before: i64, limit: i64) -> Result<Vec<AuditRow>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", at, actor, action, target, detail FROM audit_log
           WHERE id < ? ORDER BY id DESC LIMIT ?"#,
        before,
        limit
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| AuditRow {
            id: r.id,
            at_ms: r.at,
            actor: r.actor,
            action: r.action,
            target: r.target,
            detail: r.detail,
        })
        .collect())
}
