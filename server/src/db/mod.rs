//! The embedded SQLite database: connection options (WAL, foreign keys,
//! busy timeout), migrations, and the query modules. Query functions take a
//! connection or transaction so the caller decides when to commit.

pub mod accounts;
pub mod audit;
pub mod backfill;
pub mod cluster;
pub mod jobs;
pub mod maintenance;
pub mod scheduling;
pub mod secrets;
pub mod seed;
pub mod views;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::time::Duration;

use crate::config::DatabaseSettings;

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

#[derive(Debug, thiserror::Error)]
pub enum DbSetupError {
    #[error("bad database.url `{url}`: {source}")]
    BadUrl { url: String, source: sqlx::Error },
    #[error("cannot create the database directory {dir}: {source}")]
    Directory { dir: String, source: std::io::Error },
    #[error("cannot open the database: {0}")]
    Open(#[source] sqlx::Error),
    #[error("cannot apply migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Opens (creating if needed) the database and applies pending migrations.
pub async fn connect(settings: &DatabaseSettings) -> Result<SqlitePool, DbSetupError> {
    let options = SqliteConnectOptions::from_str(&settings.url)
        .map_err(|source| DbSetupError::BadUrl { url: settings.url.clone(), source })?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL + NORMAL is durable across process crashes, which is what
        // crash-safe dispatch needs; only an OS crash may lose the last commit.
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_millis(settings.busy_timeout_ms));
    if let Some(dir) = options.get_filename().parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)
                .map_err(|source| DbSetupError::Directory { dir: dir.display().to_string(), source })?;
        }
    }
    let pool = SqlitePoolOptions::new()
        .max_connections(settings.max_connections.max(1))
        .connect_with(options)
        .await
        .map_err(DbSetupError::Open)?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// A transaction that takes SQLite's write lock up front. A deferred one
/// that reads and then writes fails with SQLITE_BUSY_SNAPSHOT when another
/// connection wrote in between (WAL); IMMEDIATE waits (busy timeout) instead.
pub async fn write_tx(pool: &SqlitePool) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}
