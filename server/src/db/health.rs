//! Whether the database answers (`/healthz`, `/readyz`).

use db_macros::dual;

use super::AsConn;

/// One round trip to the database.
#[dual]
pub async fn ping(conn: &mut impl AsConn) -> Result<(), sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT CAST(1 AS BIGINT) AS "one!: i64""#).fetch_one(&mut *conn).await.map(|_| ())
}
