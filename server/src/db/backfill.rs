//! Backfill instance records (policy §7): one row per LLM instance, from
//! before it is started (so a crash cannot lose it) until it ends; the
//! rows' durations give the served GPU-hours.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;

use super::scheduling::{format_gpus, parse_gpus};
use crate::policy::backfill::Instance;

/// Running instances with how the executor finds them (`None` = the
/// server stopped before the executor answered).
#[dual]
pub async fn live(conn: &mut impl AsConn) -> Result<Vec<(Instance, Option<String>)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", node, tier, gpu_indices, executor_ref FROM backfill_instances WHERE ended_at IS NULL ORDER BY id"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            (Instance { id: r.id, node: r.node, tier: r.tier, gpus: parse_gpus(Some(&r.gpu_indices)) }, r.executor_ref)
        })
        .collect())
}

#[dual]
pub async fn insert(conn: &mut WriteTx, node: &str, tier: &str, gpus: &[u32], now_ms: i64) -> Result<i64, sqlx::Error> {
    let gpus = format_gpus(gpus);
    let id = sqlx::query_scalar!(
        "INSERT INTO backfill_instances (node, tier, gpu_indices, started_at) VALUES (?, ?, ?, ?) RETURNING id AS \"id!: i64\"",
        node,
        tier,
        gpus,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?
    ;
    Ok(id)
}

#[dual]
pub async fn set_started(
    conn: &mut WriteTx,
    id: i64,
    executor_ref: &str,
    endpoint: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE backfill_instances SET executor_ref = ?, endpoint = ? WHERE id = ?",
        executor_ref,
        endpoint,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Ends an instance (once; later calls change nothing).
#[dual]
pub async fn end(conn: &mut WriteTx, id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE backfill_instances SET ended_at = ? WHERE id = ? AND ended_at IS NULL", now_ms, id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// What admins changed of the backfill settings (None = the file's value).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    pub enabled: Option<bool>,
    pub command: Option<String>,
    pub min_idle_seconds: Option<i64>,
    pub gpus_per_instance: Option<i64>,
}

#[dual]
pub async fn overrides(conn: &mut impl AsConn) -> Result<Overrides, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT enabled <> 0 AS "enabled?: bool", command, min_idle_seconds, gpus_per_instance FROM backfill_overrides WHERE id = 1"#
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row
        .map(|r| Overrides {
            enabled: r.enabled,
            command: r.command,
            min_idle_seconds: r.min_idle_seconds,
            gpus_per_instance: r.gpus_per_instance,
        })
        .unwrap_or_default())
}

#[dual]
pub async fn set_overrides(conn: &mut WriteTx, o: &Overrides, by: &str, now_ms: i64) -> Result<(), sqlx::Error> {
    let enabled = o.enabled.map(i64::from);
    sqlx::query!(
        "INSERT INTO backfill_overrides (id, enabled, command, min_idle_seconds, gpus_per_instance, updated_at, updated_by)
         VALUES (1, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET enabled = excluded.enabled, command = excluded.command,
             min_idle_seconds = excluded.min_idle_seconds, gpus_per_instance = excluded.gpus_per_instance,
             updated_at = excluded.updated_at, updated_by = excluded.updated_by",
        enabled,
        o.command,
        o.min_idle_seconds,
        o.gpus_per_instance,
        now_ms,
        by
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}
