//! The GPU-OOM signatures admins set (policy §6); `None` while they have
//! set none and the built-in list applies.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;

#[dual]
pub async fn get(conn: &mut impl AsConn) -> Result<Option<Vec<String>>, sqlx::Error> {
    let row =
        sqlx::query_scalar!("SELECT patterns_json FROM oom_patterns WHERE id = 1").fetch_optional(&mut *conn).await?;
    Ok(row.map(|json| serde_json::from_str(&json).unwrap_or_default()))
}

#[dual]
pub async fn set(conn: &mut WriteTx, patterns: &[String], now_ms: i64) -> Result<(), sqlx::Error> {
    let json = serde_json::to_string(patterns).unwrap_or_else(|_| "[]".into());
    sqlx::query!(
        "INSERT INTO oom_patterns (id, patterns_json, updated_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET patterns_json = excluded.patterns_json, updated_at = excluded.updated_at",
        json,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The list in force: the admins' if set, else the built-in one.
#[dual]
pub async fn in_force(conn: &mut impl AsConn) -> Result<Vec<String>, sqlx::Error> {
    Ok(get(conn)
        .await?
        .unwrap_or_else(|| crate::policy::oom::DEFAULT_GPU_OOM_PATTERNS.iter().map(|p| p.to_string()).collect()))
}
