//! Online backup (`jpu-share backup FILE`): a consistent copy of the
//! database while the server runs. SQLite's `VACUUM INTO` reads one
//! snapshot (a read transaction: writers of the running server go on,
//! WAL mode) into a new, compact file. The copy holds every account,
//! token hash and job script, so it is written 0600 into a 0700 folder
//! next to `FILE` and only then linked to its name: nobody else can open
//! it at any point, and an existing file is never overwritten.
//!
//! Restore: stop the server, replace its database file with the copy
//! (and remove the old `-wal` and `-shm` files), start it. Jobs that ran
//! when the copy was made are re-adopted from their attempt records, or
//! reconciled as ended, like after any restart.
//!
//! On PostgreSQL the copy is `pg_dump`'s custom format (one snapshot of
//! the whole database, read while the servers go on), written the same
//! way (0600, a 0700 folder, linked to its name); `pg_restore` reads it.
//! The password reaches `pg_dump` through its environment, never its
//! command line (which other users of the machine can read).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use crate::config::DatabaseSettings;

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{0} already exists: choose a new file (a backup never overwrites one)")]
    Exists(PathBuf),
    #[error("{0}")]
    Url(String),
    #[error("cannot open the database (is database.url the server's?): {0}")]
    Open(#[source] sqlx::Error),
    #[error("cannot copy the database: {0}")]
    Copy(#[source] sqlx::Error),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("pg_dump failed: {0}")]
    Dump(String),
}

/// What a backup wrote.
#[derive(Debug)]
pub struct Backup {
    pub bytes: u64,
    pub jobs: i64,
}

/// Copies the database `settings` names into `file` (which must not exist).
pub async fn backup(settings: &DatabaseSettings, file: &Path) -> Result<Backup, BackupError> {
    if file.symlink_metadata().is_ok() {
        return Err(BackupError::Exists(file.to_path_buf()));
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BackupError::Io { path, source }
    };
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if super::is_postgres_url(&settings.url) {
        return postgres_backup(settings, file, &parent).await;
    }
    let options = super::sqlite_options(&settings.url)
        .map_err(|e| BackupError::Url(e.to_string()))?
        .create_if_missing(false)
        .busy_timeout(Duration::from_millis(settings.busy_timeout_ms.max(5_000)));
    let mut conn = options.connect().await.map_err(BackupError::Open)?;

    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let folder = parent.join(format!(".jpu-backup-{}-{nonce}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&folder).map_err(io(&folder))?;
    let result = async {
        let copy = folder.join("copy.db");
        sqlx::query("VACUUM INTO ?")
            .bind(copy.to_string_lossy().into_owned())
            .execute(&mut conn)
            .await
            .map_err(BackupError::Copy)?;
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)).map_err(io(&copy))?;
        let jobs = count_jobs(&copy).await?;
        // a link fails rather than replace a file made meanwhile
        std::fs::hard_link(&copy, file).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => BackupError::Exists(file.to_path_buf()),
            _ => BackupError::Io { path: file.to_path_buf(), source: e },
        })?;
        let bytes = std::fs::metadata(file).map_err(io(file))?.len();
        Ok(Backup { bytes, jobs })
    }
    .await;
    let _ = conn.close().await;
    let _ = std::fs::remove_dir_all(&folder);
    result
}

/// The copy opens as a database and has its jobs table.
async fn count_jobs(copy: &Path) -> Result<i64, BackupError> {
    let mut conn =
        SqliteConnectOptions::new().filename(copy).read_only(true).connect().await.map_err(BackupError::Open)?;
    let jobs = sqlx::query_scalar("SELECT COUNT(*) FROM jobs").fetch_one(&mut conn).await.map_err(BackupError::Copy)?;
    let _ = conn.close().await;
    Ok(jobs)
}

/// `pg_dump --format=custom` of the database into `file`.
async fn postgres_backup(settings: &DatabaseSettings, file: &Path, parent: &Path) -> Result<Backup, BackupError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BackupError::Io { path, source }
    };
    let mut url = url::Url::parse(settings.url.trim()).map_err(|e| BackupError::Url(e.to_string()))?;
    let password = url.password().map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned());
    let _ = url.set_password(None);
    // the copy's jobs, as the database has them now (the dump's snapshot
    // is taken just after)
    let jobs: i64 = {
        let pool = super::open_existing(settings).await.map_err(|e| BackupError::Url(e.to_string()))?;
        let mut conn = pool.acquire().await.map_err(BackupError::Open)?;
        super::jobs::count_all(&mut conn).await.map_err(BackupError::Copy)?
    };
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let folder = parent.join(format!(".jpu-backup-{}-{nonce}", std::process::id()));
    std::fs::DirBuilder::new().mode(0o700).create(&folder).map_err(io(&folder))?;
    let result = async {
        let copy = folder.join("copy.dump");
        let mut dump = tokio::process::Command::new("pg_dump");
        dump.arg("--format=custom").arg("--no-owner").arg("--file").arg(&copy).arg("--dbname").arg(url.as_str());
        if let Some(password) = &password {
            dump.env("PGPASSWORD", password);
        }
        let out = dump.output().await.map_err(|e| BackupError::Dump(format!("cannot run pg_dump: {e}")))?;
        if !out.status.success() {
            return Err(BackupError::Dump(String::from_utf8_lossy(&out.stderr).trim().to_string()));
        }
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)).map_err(io(&copy))?;
        std::fs::hard_link(&copy, file).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => BackupError::Exists(file.to_path_buf()),
            _ => BackupError::Io { path: file.to_path_buf(), source: e },
        })?;
        let bytes = std::fs::metadata(file).map_err(io(file))?.len();
        Ok(Backup { bytes, jobs })
    }
    .await;
    let _ = std::fs::remove_dir_all(&folder);
    result
}
