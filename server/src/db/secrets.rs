//! Secrets generated once and kept in the database, so restarts keep
//! signed session cookies valid.

use super::WriteTx;
use db_macros::dual;
use rand::RngCore;

/// The secret called `name`, created with `len` random bytes if missing.
#[dual]
pub async fn get_or_create(conn: &mut WriteTx, name: &str, len: usize) -> Result<Vec<u8>, sqlx::Error> {
    let mut fresh = vec![0u8; len];
    rand::rngs::OsRng.fill_bytes(&mut fresh);
    sqlx::query!("INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", name, fresh)
        .execute(conn.conn())
        .await?;
    let row = sqlx::query!("SELECT value FROM server_secrets WHERE name = ?", name).fetch_one(conn.conn()).await?;
    Ok(row.value)
}
