//! Wake-ups between instances on one PostgreSQL database (api.md "High
//! availability"): a submit on a standby tells the scheduler at once
//! through `NOTIFY`, so submit → RUNNING stays in milliseconds whichever
//! instance took the request. Queries only; `services::ha` decides when.

use sqlx::postgres::PgListener;

use super::Pool;

/// The channel every instance listens on.
const CHANNEL: &str = "jpu_wake";

/// Tells every instance listening that the scheduler has work; `from`
/// names the sender (which skips its own). Nothing on SQLite.
pub async fn announce(pool: &Pool, from: &str) -> Result<(), sqlx::Error> {
    if let Pool::Postgres(pool) = pool {
        sqlx::query("SELECT pg_notify($1, $2)").bind(CHANNEL).bind(from).execute(pool).await?;
    }
    Ok(())
}

/// A connection that hears the announcements (it reconnects by itself
/// after the database comes back). None on SQLite.
pub struct Wakes(PgListener);

impl Wakes {
    pub async fn listen(pool: &Pool) -> Result<Option<Self>, sqlx::Error> {
        let Pool::Postgres(pool) = pool else { return Ok(None) };
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen(CHANNEL).await?;
        Ok(Some(Self(listener)))
    }

    /// The next announcement's sender.
    pub async fn next(&mut self) -> Result<String, sqlx::Error> {
        Ok(self.0.recv().await?.payload().to_string())
    }
}
