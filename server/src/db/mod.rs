//! The embedded SQLite database: connection options (WAL, foreign keys,
//! busy timeout), migrations, and the query modules. Query functions take a
//! connection or transaction so the caller decides when to commit.

pub mod accounts;
pub mod audit;
pub mod backfill;
pub mod backup;
pub mod campus_identities;
pub mod cluster;
pub mod datasets;
pub mod gates;
pub mod health;
pub mod job_view;
pub mod jobs;
pub mod lab_gids;
pub mod lease;
pub mod maintenance;
pub mod metrics;
pub mod notifications;
pub mod oom_patterns;
pub mod reports;
pub mod scheduling;
pub mod secrets;
pub mod sessions;
pub mod storage;
pub mod views;
pub mod workspaces;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
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
    #[error("database.url `{0}` is PostgreSQL, which this build does not run yet: use a sqlite:// URL")]
    Postgres(String),
    #[error("database.url `{0}` is not a database URL: it must start with sqlite:// (never taken as a file name)")]
    Scheme(String),
}

/// The SQLite options of `url`, once its scheme is checked (api.md: any
/// other scheme is refused, never taken as a file name).
pub fn sqlite_options(url: &str) -> Result<SqliteConnectOptions, DbSetupError> {
    let trimmed = url.trim();
    let lower = trimmed.to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Err(DbSetupError::Postgres(redacted(trimmed)));
    }
    if !lower.starts_with("sqlite:") {
        return Err(DbSetupError::Scheme(redacted(trimmed)));
    }
    SqliteConnectOptions::from_str(trimmed).map_err(|source| DbSetupError::BadUrl { url: redacted(trimmed), source })
}

/// A URL as an error may show it: a password in it is not.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// Opens (creating if needed) the database and applies pending migrations.
pub async fn connect(settings: &DatabaseSettings) -> Result<SqlitePool, DbSetupError> {
    let options = sqlite_options(&settings.url)?
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
    let state = migrations(&pool).await.map_err(DbSetupError::Open)?;
    for (version, description) in &state.pending {
        tracing::info!(version, description, "migrating the database");
    }
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Where a database stands against this binary's migrations.
#[derive(Debug, Default)]
pub struct MigrationState {
    /// Applied already.
    pub applied: usize,
    /// This binary's migrations the database has not had: (version, description).
    pub pending: Vec<(i64, String)>,
    /// Migrations the database has that this binary does not know (a
    /// newer binary ran on it).
    pub unknown: Vec<i64>,
}

/// Reads the migrations table (none yet = every migration pending);
/// changes nothing.
pub async fn migrations(pool: &SqlitePool) -> Result<MigrationState, sqlx::Error> {
    let has_table: bool =
        sqlx::query_scalar("SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'")
            .fetch_one(pool)
            .await?;
    let applied: Vec<i64> = if has_table {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(pool)
            .await?
    } else {
        Vec::new()
    };
    let known: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
    Ok(MigrationState {
        applied: applied.len(),
        pending: MIGRATOR
            .iter()
            .filter(|m| !applied.contains(&m.version))
            .map(|m| (m.version, m.description.to_string()))
            .collect(),
        unknown: applied.into_iter().filter(|v| !known.contains(v)).collect(),
    })
}

/// Opens an existing database without creating or migrating it (for
/// `jpu-share migrate --check`).
pub async fn open_existing(settings: &DatabaseSettings) -> Result<SqlitePool, DbSetupError> {
    let options = sqlite_options(&settings.url)?.create_if_missing(false).read_only(true);
    SqlitePoolOptions::new().max_connections(1).connect_with(options).await.map_err(DbSetupError::Open)
}

/// A transaction that takes SQLite's write lock up front. A deferred one
/// that reads and then writes fails with SQLITE_BUSY_SNAPSHOT when another
/// connection wrote in between (WAL); IMMEDIATE waits (busy timeout) instead.
///
/// Writers of this process first queue on an async lock per database
/// file, in arrival order: SQLite's own busy handler makes a blocked writer
/// sleep 1, 2, 5 … 100 ms between tries, which under many concurrent
/// submits turned into tail latencies of seconds. (A writer that waits
/// longer than `GATE_WAIT` goes on to SQLite's lock, as before.)
pub async fn write_tx(pool: &SqlitePool) -> Result<WriteTx, sqlx::Error> {
    begin_write(pool, false).await
}

/// [`write_tx`] for a transaction that only inserts new jobs (submits):
/// its commit leaves [`plan_inputs`] alone, so a scheduler cycle that
/// decided on an earlier read may still apply its plan (see
/// `scheduler::cycle`).
pub async fn write_tx_adding_jobs(pool: &SqlitePool) -> Result<WriteTx, sqlx::Error> {
    begin_write(pool, true).await
}

async fn begin_write(pool: &SqlitePool, only_adds_jobs: bool) -> Result<WriteTx, sqlx::Error> {
    let turn = tokio::time::timeout(GATE_WAIT, write_gate(pool).lock_owned()).await.ok();
    Ok(WriteTx { tx: pool.begin_with("BEGIN IMMEDIATE").await?, _turn: turn, only_adds_jobs })
}

const GATE_WAIT: Duration = Duration::from_secs(5);

fn write_gate(pool: &SqlitePool) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    type Gates =
        std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, std::sync::Arc<tokio::sync::Mutex<()>>>>;
    static GATES: std::sync::OnceLock<Gates> = std::sync::OnceLock::new();
    let file = pool.connect_options().get_filename().to_path_buf();
    let mut gates = GATES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    gates.entry(file).or_default().clone()
}

/// Write transactions committed by this process. Every write to jobs,
/// users and labs goes through [`write_tx`], and the count moves only
/// after the commit, so a reader that saw count `n` before it queried and
/// still sees `n` knows nothing committed since (see `views::QueueCache`).
/// Process-wide: servers sharing a process only cause extra refreshes.
static COMMITS: AtomicU64 = AtomicU64::new(0);

pub fn commits() -> u64 {
    COMMITS.load(Ordering::Acquire)
}

/// Of those, the commits that may change what the scheduler decides:
/// every one but a submit's insert of new jobs. Counted the same way, so
/// a cycle that read its snapshot after seeing `n` here and still sees
/// `n` once it holds the write turn knows its plan rests on current
/// placements, limits, phases and queue (new jobs aside).
static PLAN_INPUT_COMMITS: AtomicU64 = AtomicU64::new(0);

pub fn plan_inputs() -> u64 {
    PLAN_INPUT_COMMITS.load(Ordering::Acquire)
}

/// Counts a commit made without [`write_tx`] (tests that set rows by SQL).
pub fn note_commit() {
    COMMITS.fetch_add(1, Ordering::AcqRel);
    PLAN_INPUT_COMMITS.fetch_add(1, Ordering::AcqRel);
}

/// A connection of either database, as the query functions of this layer
/// take it (`#[dual]`): a pooled connection, a plain one or a write
/// transaction. Each query function runs its copy for the database
/// `is_postgres` names, and asks for that database's connection only.
pub trait AsConn: Send {
    fn is_postgres(&self) -> bool;
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection;
    fn postgres(&mut self) -> &mut sqlx::PgConnection;
}

const NOT_SQLITE: &str = "a PostgreSQL connection was asked for SQLite's (a #[dual] copy chose wrong)";
const NOT_POSTGRES: &str = "a SQLite connection was asked for PostgreSQL's (a #[dual] copy chose wrong)";

impl AsConn for sqlx::SqliteConnection {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::PgConnection {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for sqlx::pool::PoolConnection<sqlx::Sqlite> {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::pool::PoolConnection<sqlx::Postgres> {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for sqlx::Transaction<'_, sqlx::Sqlite> {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        self
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

impl AsConn for sqlx::Transaction<'_, sqlx::Postgres> {
    fn is_postgres(&self) -> bool {
        true
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        unreachable!("{NOT_SQLITE}")
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        self
    }
}

impl AsConn for WriteTx {
    fn is_postgres(&self) -> bool {
        false
    }
    fn sqlite(&mut self) -> &mut sqlx::SqliteConnection {
        &mut self.tx
    }
    fn postgres(&mut self) -> &mut sqlx::PgConnection {
        unreachable!("{NOT_POSTGRES}")
    }
}

/// [`write_tx`]'s transaction: a `sqlx::Transaction` whose commit is
/// counted, holding this process's write turn until it ends.
pub struct WriteTx {
    tx: sqlx::Transaction<'static, sqlx::Sqlite>,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
    only_adds_jobs: bool,
}

impl WriteTx {
    /// The transaction's connection, for the queries of a write (and the
    /// reads it makes on the way). The database layer's writes take a
    /// `&mut WriteTx`, never a plain connection: a write outside the gate
    /// does not compile, so none can slip past the commit count the
    /// scheduler and the queue cache trust.
    pub fn conn(&mut self) -> &mut sqlx::SqliteConnection {
        &mut self.tx
    }

    pub async fn commit(self) -> Result<(), sqlx::Error> {
        let result = self.tx.commit().await;
        // counted even when the commit failed: a refresh too many is
        // harmless; counted before the write turn is released, so whoever
        // takes the turn next sees it
        COMMITS.fetch_add(1, Ordering::AcqRel);
        if !self.only_adds_jobs {
            PLAN_INPUT_COMMITS.fetch_add(1, Ordering::AcqRel);
        }
        result
    }
}

impl std::ops::Deref for WriteTx {
    type Target = sqlx::Transaction<'static, sqlx::Sqlite>;
    fn deref(&self) -> &Self::Target {
        &self.tx
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.tx
    }
}
