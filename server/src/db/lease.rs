//! The scheduler's lease row (api.md "High availability"): queries only.

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

/// Takes the lease for `holder`: the epoch moves on and is returned.
#[dual]
pub async fn take(conn: &mut WriteTx, holder: &str, now_ms: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = ?, renewed_at = ? WHERE id = 1
           RETURNING epoch AS "epoch!: i64""#,
        holder,
        now_ms
    )
    .fetch_one(conn.conn())
    .await
}

/// The lease as it stands: (epoch, holder).
#[dual]
pub async fn current(conn: &mut impl AsConn) -> Result<(i64, String), sqlx::Error> {
    let row = sqlx::query!(r#"SELECT epoch AS "epoch!: i64", holder FROM scheduler_lease WHERE id = 1"#)
        .fetch_one(&mut *conn)
        .await?;
    Ok((row.epoch, row.holder))
}

/// Takes the lease for `holder` if nobody holds it, or its holder has not
/// renewed it since `lapsed_before`: the new epoch, or None.
#[dual]
pub async fn take_if_lapsed(
    conn: &mut WriteTx,
    holder: &str,
    now_ms: i64,
    lapsed_before: i64,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = ?, renewed_at = ?
           WHERE id = 1 AND (holder = '' OR renewed_at < ?)
           RETURNING epoch AS "epoch!: i64""#,
        holder,
        now_ms,
        lapsed_before
    )
    .fetch_optional(conn.conn())
    .await
}

/// Renews the lease `holder` took at `epoch`: false once another took it.
#[dual]
pub async fn renew(conn: &mut WriteTx, holder: &str, epoch: i64, now_ms: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE scheduler_lease SET renewed_at = ? WHERE id = 1 AND epoch = ? AND holder = ?",
        now_ms,
        epoch,
        holder
    )
    .execute(conn.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Gives the lease up (a graceful stop): a standby takes it at its next try.
#[dual]
pub async fn release(conn: &mut WriteTx, holder: &str, epoch: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE scheduler_lease SET renewed_at = 0 WHERE id = 1 AND epoch = ? AND holder = ?", epoch, holder)
        .execute(conn.conn())
        .await?;
    Ok(())
}
