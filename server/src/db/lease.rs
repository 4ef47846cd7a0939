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
