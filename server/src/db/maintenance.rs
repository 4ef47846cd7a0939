//! The single-row maintenance state (policy §10).

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use app::model::MaintenancePhase;

#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceRow {
    pub phase: MaintenancePhase,
    pub message: Option<String>,
    pub since_ms: i64,
}

#[dual]
pub async fn get(conn: &mut impl AsConn) -> Result<MaintenanceRow, sqlx::Error> {
    let row = sqlx::query!("SELECT phase, message, since FROM maintenance WHERE id = 1").fetch_one(&mut *conn).await?;
    let phase = row.phase.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(MaintenanceRow { phase, message: row.message, since_ms: row.since })
}

#[dual]
pub async fn set(
    conn: &mut WriteTx,
    phase: MaintenancePhase,
    message: Option<&str>,
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    let phase = phase.as_str();
    sqlx::query!("UPDATE maintenance SET phase = ?, message = ?, since = ? WHERE id = 1", phase, message, now_ms)
        .execute(conn.conn())
        .await?;
    Ok(())
}
