//! The embedded SQLite database: connection options (WAL, foreign keys,
//! busy timeout), migrations, and the query modules. Query functions take a
//! connection or transaction so the caller decides when to commit.

pub mod accounts;
pub mod audit;
pub mod backfill;
pub mod backup;
pub mod campus_identities;
pub mod cluster;
mod conn;
pub mod console_sessions;
pub mod copy;
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
pub mod wakes;
pub mod workspaces;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::config::DatabaseSettings;
pub use conn::{AsConn, Pool, PoolConn, ReadTx};

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
    #[error("database.url `{0}` is PostgreSQL: this needs a sqlite:// URL")]
    Postgres(String),
    #[error("database.url `{0}` is not a database URL: it must start with sqlite:// or postgres:// (never taken as a file name)")]
    Scheme(String),
}

/// The SQLite options of `url`, once its scheme is checked (api.md: any
/// other scheme is refused, never taken as a file name).
pub fn sqlite_options(url: &str) -> Result<SqliteConnectOptions, DbSetupError> {
    let trimmed = url.trim();
    let lower = trimmed.to_ascii_lowercase();
    if is_postgres_url(trimmed) {
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
        Ok(_) => url.to_string(),
        // a URL that does not parse (a `/` or `#` in its password) may
        // still hold one: only what stands before `://` is shown
        Err(_) => match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://… (a URL that does not parse)"),
            None if url.contains('@') => "(a URL that does not parse)".into(),
            None => url.to_string(),
        },
    }
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// PostgreSQL's migrations: the schema at the SQLite migrations' version
/// it names, then a twin of each later one (`migrations/postgres`).
pub static MIGRATOR_PG: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Opens (creating if needed) the database and applies pending migrations.
/// On PostgreSQL a transaction left idle for `lease` is ended by the
/// database (see [`connect_postgres`]).
pub async fn connect(settings: &DatabaseSettings, lease: Duration) -> Result<Pool, DbSetupError> {
    if is_postgres_url(&settings.url) {
        return connect_postgres(settings, lease).await;
    }
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
    let pool = Pool::Sqlite(pool);
    log_pending(&pool).await?;
    if let Pool::Sqlite(sqlite) = &pool {
        MIGRATOR.run(sqlite).await?;
    }
    Ok(pool)
}

/// Every write holds one advisory lock for the whole database
/// ([`PG_WRITE_LOCK`]). A process stopped inside a write (`SIGSTOP`, a
/// VM paused, a client cut off) would hold it for as long as it sleeps,
/// and every other instance's writes, the standby's taking of the lease
/// among them, would wait behind it: the cluster stood still until the
/// sleeper woke (seen in the failover test, once in three runs). Our
/// writes wait on nothing slow between their statements (no executor,
/// network or file work; the longest is a group lookup through the
/// host's directory when a lab is given a gid), so one idle for a whole
/// lease is a sleeper: PostgreSQL ends its session, and the lock with
/// it, by the time the lease lapses.
async fn connect_postgres(settings: &DatabaseSettings, lease: Duration) -> Result<Pool, DbSetupError> {
    let url = settings.url.trim();
    let options = sqlx::postgres::PgConnectOptions::from_str(url)
        .map_err(|source| DbSetupError::BadUrl { url: redacted(url), source })?
        .options([("idle_in_transaction_session_timeout", lease.as_millis().max(1000))]);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(settings.max_connections.max(1))
        .acquire_timeout(Duration::from_millis(settings.busy_timeout_ms.max(1000)))
        .connect_with(options)
        .await
        .map_err(DbSetupError::Open)?;
    let pool = Pool::Postgres(pool);
    log_pending(&pool).await?;
    if let Pool::Postgres(pg) = &pool {
        // two instances started at once migrate once: sqlx takes an
        // advisory lock around the run
        MIGRATOR_PG.run(pg).await?;
    }
    Ok(pool)
}

async fn log_pending(pool: &Pool) -> Result<(), DbSetupError> {
    let state = migrations(pool).await.map_err(DbSetupError::Open)?;
    for (version, description) in &state.pending {
        tracing::info!(version, description, "migrating the database");
    }
    Ok(())
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
pub async fn migrations(pool: &Pool) -> Result<MigrationState, sqlx::Error> {
    let (has_table, migrator) = match pool {
        Pool::Sqlite(pool) => (
            sqlx::query_scalar(
                "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
            )
            .fetch_one(pool)
            .await?,
            &MIGRATOR,
        ),
        Pool::Postgres(pool) => (
            sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL").fetch_one(pool).await?,
            &MIGRATOR_PG,
        ),
    };
    let read = "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version";
    let applied: Vec<i64> = match (has_table, pool) {
        (false, _) => Vec::new(),
        (true, Pool::Sqlite(pool)) => sqlx::query_scalar(read).fetch_all(pool).await?,
        (true, Pool::Postgres(pool)) => sqlx::query_scalar(read).fetch_all(pool).await?,
    };
    let known: Vec<i64> = migrator.iter().map(|m| m.version).collect();
    Ok(MigrationState {
        applied: applied.len(),
        pending: migrator
            .iter()
            .filter(|m| !applied.contains(&m.version))
            .map(|m| (m.version, m.description.to_string()))
            .collect(),
        unknown: applied.into_iter().filter(|v| !known.contains(v)).collect(),
    })
}

/// Opens an existing database without creating or migrating it (for
/// `jpu-share migrate --check`).
pub async fn open_existing(settings: &DatabaseSettings) -> Result<Pool, DbSetupError> {
    if is_postgres_url(&settings.url) {
        let url = settings.url.trim();
        let options = sqlx::postgres::PgConnectOptions::from_str(url)
            .map_err(|source| DbSetupError::BadUrl { url: redacted(url), source })?;
        let pool = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect_with(options).await;
        return pool.map(Pool::Postgres).map_err(DbSetupError::Open);
    }
    let options = sqlite_options(&settings.url)?.create_if_missing(false).read_only(true);
    let pool = SqlitePoolOptions::new().max_connections(1).connect_with(options).await;
    pool.map(Pool::Sqlite).map_err(DbSetupError::Open)
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
pub async fn write_tx(pool: &Pool) -> Result<WriteTx, sqlx::Error> {
    begin_write(pool, false).await
}

/// [`write_tx`] for a transaction that only inserts new jobs (submits):
/// its commit leaves [`plan_inputs`] alone, so a scheduler cycle that
/// decided on an earlier read may still apply its plan (see
/// `scheduler::cycle`).
pub async fn write_tx_adding_jobs(pool: &Pool) -> Result<WriteTx, sqlx::Error> {
    begin_write(pool, true).await
}

/// [`write_tx`] for a write that changes nothing a plan rests on (the
/// scheduler's lease): its commit leaves [`write_counts`]' plan inputs
/// alone, so renewals every few seconds make no cycle read again.
pub async fn write_tx_outside_plans(pool: &Pool) -> Result<WriteTx, sqlx::Error> {
    begin_write(pool, true).await
}

/// The key of PostgreSQL's transaction-scoped advisory lock every write
/// takes first: writes to one database are one at a time across all
/// instances, as SQLite's write lock makes them, so what a write reads
/// after its start is what it may act on (`READ COMMITTED` then sees every
/// earlier write). Any number fixed for this application will do.
const PG_WRITE_LOCK: i64 = 0x6a70_7573_6861_7265; // "jpushare"

async fn begin_write(pool: &Pool, only_adds_jobs: bool) -> Result<WriteTx, sqlx::Error> {
    let turn = tokio::time::timeout(GATE_WAIT, write_gate(pool).lock_owned()).await.ok();
    let tx = match pool {
        Pool::Sqlite(pool) => WriteInner::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
        Pool::Postgres(pool) => {
            let mut tx = pool.begin().await?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)").bind(PG_WRITE_LOCK).execute(&mut *tx).await?;
            WriteInner::Postgres(tx)
        }
    };
    Ok(WriteTx { tx, _turn: turn, only_adds_jobs })
}

const GATE_WAIT: Duration = Duration::from_secs(5);

fn write_gate(pool: &Pool) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    type Gates =
        std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, std::sync::Arc<tokio::sync::Mutex<()>>>>;
    static GATES: std::sync::OnceLock<Gates> = std::sync::OnceLock::new();
    let key = match pool {
        Pool::Sqlite(pool) => pool.connect_options().get_filename().to_path_buf(),
        Pool::Postgres(pool) => {
            let options = pool.connect_options();
            let (host, port, db) = (options.get_host(), options.get_port(), options.get_database().unwrap_or(""));
            std::path::PathBuf::from(format!("postgres://{host}:{port}/{db}"))
        }
    };
    let mut gates = GATES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    gates.entry(key).or_default().clone()
}

/// Write transactions committed by this process. Every write to jobs,
/// users and labs goes through [`write_tx`], and the count moves only
/// after the commit, so a reader that saw count `n` before it queried and
/// still sees `n` knows nothing committed since (see `views::QueueCache`).
/// Process-wide: servers sharing a process only cause extra refreshes.
/// On PostgreSQL, where other instances write too, the count is the
/// database's (`write_counts`, see [`write_counts`]).
static COMMITS: AtomicU64 = AtomicU64::new(0);

/// Of those, the commits that may change what the scheduler decides:
/// every one but a submit's insert of new jobs. Counted the same way, so
/// a cycle that read its snapshot after seeing `n` here and still sees
/// `n` once it holds the write turn knows its plan rests on current
/// placements, limits, phases and queue (new jobs aside).
static PLAN_INPUT_COMMITS: AtomicU64 = AtomicU64::new(0);

/// Writes committed so far, as every instance on this database counts
/// them: (all, those that may change a plan). SQLite: this process's
/// count (it is the only one writing); PostgreSQL: the `write_counts`
/// row each write moves in its own transaction, so a commit by another
/// instance is seen as soon as it is visible.
pub async fn write_counts(conn: &mut impl AsConn) -> Result<(u64, u64), sqlx::Error> {
    if !conn.is_postgres() {
        return Ok((COMMITS.load(Ordering::Acquire), PLAN_INPUT_COMMITS.load(Ordering::Acquire)));
    }
    let (all, plan): (i64, i64) =
        sqlx::query_as("SELECT commits, plan_inputs FROM write_counts WHERE id = 1").fetch_one(conn.postgres()).await?;
    Ok((all as u64, plan as u64))
}

/// [`write_counts`]' first figure, asking the database only where other
/// instances write (PostgreSQL): a cache check on SQLite takes no
/// connection.
pub async fn commits_seen(pool: &Pool) -> Result<u64, sqlx::Error> {
    if !pool.is_postgres() {
        return Ok(COMMITS.load(Ordering::Acquire));
    }
    Ok(write_counts(&mut pool.acquire().await?).await?.0)
}

/// Counts a commit made without [`write_tx`] (tests that set rows by SQL).
pub fn note_commit() {
    COMMITS.fetch_add(1, Ordering::AcqRel);
    PLAN_INPUT_COMMITS.fetch_add(1, Ordering::AcqRel);
}

/// [`write_tx`]'s transaction: a transaction whose commit is counted,
/// holding this process's write turn until it ends. The database layer's
/// writes take a `&mut WriteTx`, never a plain connection: a write outside
/// the gate does not compile, so none can slip past the commit count the
/// scheduler and the queue cache trust.
pub struct WriteTx {
    tx: WriteInner,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
    only_adds_jobs: bool,
}

pub(crate) enum WriteInner {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

impl WriteTx {
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        let result = match self.tx {
            WriteInner::Sqlite(tx) => tx.commit().await,
            WriteInner::Postgres(mut tx) => {
                // counted in the write itself: visible to every instance
                // exactly when the write is
                let plan = i64::from(!self.only_adds_jobs);
                let counted =
                    sqlx::query("UPDATE write_counts SET commits = commits + 1, plan_inputs = plan_inputs + $1")
                        .bind(plan)
                        .execute(&mut *tx)
                        .await;
                match counted {
                    Ok(_) => tx.commit().await,
                    Err(e) => Err(e),
                }
            }
        };
        // counted even when the commit failed: a refresh too many is
        // harmless; counted before the write turn is released, so whoever
        // takes the turn next sees it
        COMMITS.fetch_add(1, Ordering::AcqRel);
        if !self.only_adds_jobs {
            PLAN_INPUT_COMMITS.fetch_add(1, Ordering::AcqRel);
        }
        result
    }

    pub(crate) fn inner(&mut self) -> &mut WriteInner {
        &mut self.tx
    }

    pub(crate) fn inner_ref(&self) -> &WriteInner {
        &self.tx
    }
}
