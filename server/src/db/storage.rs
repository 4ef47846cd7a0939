//! What each home and lab share holds, as last measured (`storage_usage`;
//! the rules are in `services::storage`).

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

/// A place's measured usage: (bytes, when).
#[dual]
pub async fn usage_of(conn: &mut impl AsConn, place: &str) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let row = sqlx::query!("SELECT used_bytes, measured_at FROM storage_usage WHERE place = ?", place)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|r| (r.used_bytes, r.measured_at)))
}

#[dual]
pub async fn record_usage(conn: &mut WriteTx, place: &str, used_bytes: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO storage_usage (place, used_bytes, measured_at) VALUES (?, ?, ?)
         ON CONFLICT (place) DO UPDATE SET used_bytes = excluded.used_bytes, measured_at = excluded.measured_at",
        place,
        used_bytes,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The people and labs of jobs that ended since `since_ms`: whose places a
/// scan measures again first.
#[dual]
pub async fn ended_since(conn: &mut impl AsConn, since_ms: i64) -> Result<Vec<(String, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT DISTINCT u.username AS "user!", l.name AS "lab!" FROM jobs j
           JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = j.lab_id
           WHERE j.ended_at IS NOT NULL AND j.ended_at >= ?"#,
        since_ms
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.user, r.lab)).collect())
}

/// Adds `delta` bytes to a place's usage (an upload or delete through the
/// site, counted at once); never below zero.
#[dual]
pub async fn add_usage(conn: &mut WriteTx, place: &str, delta: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        dialect!(
            "INSERT INTO storage_usage (place, used_bytes, measured_at) VALUES (?, MAX(?, 0), ?)
             ON CONFLICT (place) DO UPDATE SET used_bytes = MAX(used_bytes + ?, 0)",
            "INSERT INTO storage_usage (place, used_bytes, measured_at) VALUES ($1, GREATEST($2::BIGINT, 0), $3)
             ON CONFLICT (place) DO UPDATE SET used_bytes = GREATEST(storage_usage.used_bytes + $4, 0)"
        ),
        place,
        delta,
        now_ms,
        delta
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}
