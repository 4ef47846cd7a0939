//! The scheduler's lease row (api.md "High availability"): queries only.
//! Every time in it is the database's clock, never an instance's: two
//! VMs whose clocks disagree must still agree on when a lease lapsed (a
//! standby's clock running ahead would take a lease its holder still
//! acts under).

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

/// Takes the lease for `holder`: the epoch moves on and is returned.
#[dual]
pub async fn take(conn: &mut WriteTx, holder: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        dialect!(
            r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = ?,
                      renewed_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
               WHERE id = 1 RETURNING epoch AS "epoch!: i64""#,
            r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = $1,
                      renewed_at = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT
               WHERE id = 1 RETURNING epoch AS "epoch!: i64""#
        ),
        holder
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
/// renewed it for `lease_ms`: the new epoch, or None.
#[dual]
pub async fn take_if_lapsed(conn: &mut WriteTx, holder: &str, lease_ms: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        dialect!(
            r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = ?,
                      renewed_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
               WHERE id = 1 AND (holder = ''
                     OR renewed_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - ?)
               RETURNING epoch AS "epoch!: i64""#,
            r#"UPDATE scheduler_lease SET epoch = epoch + 1, holder = $1,
                      renewed_at = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT
               WHERE id = 1 AND (holder = ''
                     OR renewed_at < (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT - $2)
               RETURNING epoch AS "epoch!: i64""#
        ),
        holder,
        lease_ms
    )
    .fetch_optional(conn.conn())
    .await
}

/// Renews the lease `holder` took at `epoch`: false once another took it.
#[dual]
pub async fn renew(conn: &mut WriteTx, holder: &str, epoch: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        dialect!(
            "UPDATE scheduler_lease SET renewed_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
             WHERE id = 1 AND epoch = ? AND holder = ?",
            "UPDATE scheduler_lease SET renewed_at = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT
             WHERE id = 1 AND epoch = $1 AND holder = $2"
        ),
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
