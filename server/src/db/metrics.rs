//! The counts `/metrics` reports (api.md "Operations"), read at each
//! scrape; the rules of what they mean are in `services::metrics`.

use db_macros::dual;

use super::AsConn;

/// Unfinished jobs: (state, tier or "", lab, count).
#[dual]
pub async fn unfinished_jobs(conn: &mut impl AsConn) -> Result<Vec<(String, String, String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT j.state AS "state!", COALESCE(j.tier, '') AS "tier!: String", l.name AS "lab!", COUNT(*) AS "n!: i64"
           FROM jobs j JOIN labs l ON l.id = j.lab_id
           WHERE j.ended_at IS NULL GROUP BY 1, 2, 3"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.state, r.tier, r.lab, r.n)).collect())
}

/// Waiting jobs by why they wait (the cycle's pending reason) and tier.
#[dual]
pub async fn waiting_by_reason(conn: &mut impl AsConn) -> Result<Vec<(String, String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT COALESCE(pending_reason, 'NONE') AS "reason!: String", COALESCE(tier, '') AS "tier!: String",
                  COUNT(*) AS "n!: i64"
           FROM jobs WHERE state IN ('USER_QUEUE_WAIT', 'GLOBAL_QUEUE_WAIT') GROUP BY 1, 2"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.reason, r.tier, r.n)).collect())
}

/// Ended jobs by their end reason (never fewer: jobs are kept).
#[dual]
pub async fn ended_by_reason(conn: &mut impl AsConn) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT COALESCE(end_reason, state) AS "reason!: String", COUNT(*) AS "n!: i64"
           FROM jobs WHERE ended_at IS NOT NULL GROUP BY 1"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.reason, r.n)).collect())
}

/// Notification deliveries given up on.
#[dual]
pub async fn failed_deliveries(conn: &mut impl AsConn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "n!: i64" FROM notification_outbox WHERE state = 'FAILED'"#)
        .fetch_one(&mut *conn)
        .await
}

/// Sessions not ended.
#[dual]
pub async fn open_sessions(conn: &mut impl AsConn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "n!: i64" FROM jobs WHERE kind = 'session' AND ended_at IS NULL"#)
        .fetch_one(&mut *conn)
        .await
}
