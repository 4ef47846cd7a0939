//! `jpu-share backup FILE` against a running server: a copy taken during
//! a stream of submits and with a job running restores into a server that
//! has every job committed before the copy began, re-adopts the running
//! one, and charges it once.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::TestApp;
use crate::local_executor::{charges, job, read, release, HOLD};
use crate::process::ServerProcess;

async fn backup(db: &std::path::Path, file: &std::path::Path) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .arg("backup")
        .arg(file)
        .env("JPU__DATABASE__URL", format!("sqlite://{}", db.display()))
        .output()
        .await
        .expect("run jpu-share backup")
}

#[tokio::test]
async fn a_backup_under_load_restores_every_committed_job_and_charges_the_running_one_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let running = app.submit_ok(&token, job("runs-across", 1, HOLD)).await["id"].as_i64().unwrap();
    app.wait_state(&token, running, "RUNNING").await;

    // a stream of submits, each noted with when its 201 came back
    let stop = Arc::new(AtomicBool::new(false));
    let committed: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
    let stream = {
        let (stop, committed) = (stop.clone(), committed.clone());
        let (client, url, token) = (app.client.clone(), app.url("/v1/jobs"), token.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let resp = client.post(&url).bearer_auth(&token).json(&job("stream", 1, "true")).send().await;
                if let Ok(resp) = resp {
                    if resp.status() != StatusCode::CREATED {
                        continue;
                    }
                    let id = resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
                    committed.lock().unwrap().push((id, Instant::now()));
                }
            }
        })
    };
    let count = |c: &Arc<Mutex<Vec<(i64, Instant)>>>| c.lock().unwrap().len();
    crate::local_executor::wait_for("submits before the backup", || count(&committed) >= 10).await;
    let began = Instant::now();
    let file = app.dir.path().join("copy.db");
    let out = backup(&app.db_path(), &file).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("backed up "), "{out:?}");
    let during = count(&committed);
    crate::local_executor::wait_for("submits after the backup", || count(&committed) >= during + 5).await;
    stop.store(true, Ordering::Relaxed);
    stream.await.unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "the copy is root's alone");

    // never over an existing file; a wrong database is an error, not a new one
    let again = backup(&app.db_path(), &file).await;
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"), "{again:?}");
    let missing = backup(&app.dir.path().join("nope.db"), &app.dir.path().join("other.db")).await;
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    assert!(!app.dir.path().join("nope.db").exists() && !app.dir.path().join("other.db").exists());

    // restore: stop, replace, start
    server.kill9().await;
    let db = app.db_path();
    let dir = app.stop().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::copy(&file, &db).unwrap();
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let before: Vec<i64> = committed.lock().unwrap().iter().filter(|(_, at)| *at < began).map(|(id, _)| *id).collect();
    assert!(before.len() >= 10);
    for id in before {
        assert_eq!(app.job(&token, id).await.status(), StatusCode::OK, "job {id} was committed before the backup");
    }
    let view: Value = app.job(&token, running).await.json().await.unwrap();
    assert_eq!(view["state"], "RUNNING", "re-adopted: {view}");
    release(&app, running);
    let done = app.wait_state(&token, running, "COMPLETED").await;
    assert_eq!(done["attempts"].as_array().unwrap().len(), 1, "{done}");
    assert_eq!(read(&app.log_path(running)).matches(" of job ").count(), 1, "started once");
    assert_eq!(charges(&app, running).await, 1, "charged once");
    server.kill9().await;
}

/// #44: the restore the guide documents, end to end — a backup, then a
/// job that fails with exit 7, then the backup put back. The next new job
/// never gets the failed job's id (its attempt record, log and outputs are
/// still in the output folder), runs its own script and ends with its own
/// exit code and log.
#[tokio::test]
async fn a_restore_never_gives_a_new_job_another_jobs_past() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let first = app.submit_ok(&token, job("before", 1, "echo first")).await["id"].as_i64().unwrap();
    app.wait_state(&token, first, "COMPLETED").await;
    let file = app.dir.path().join("copy.db");
    assert!(backup(&app.db_path(), &file).await.status.success());
    let lost =
        app.submit_ok(&token, job("after-backup", 1, "echo from-the-lost-job; exit 7")).await["id"].as_i64().unwrap();
    app.wait_state(&token, lost, "FAILED").await;

    server.kill9().await;
    let db = app.db_path();
    let dir = app.stop().await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::copy(&file, &db).unwrap();
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    assert_eq!(app.job(&token, lost).await.status(), StatusCode::NOT_FOUND, "the restored database never saw it");
    let fresh = app.submit_ok(&token, job("fresh", 1, "echo fresh-start")).await["id"].as_i64().unwrap();
    assert!(fresh > lost, "a new job's id ({fresh}) is above every id the output folder holds ({lost})");
    let done = app.wait_state(&token, fresh, "COMPLETED").await;
    assert_eq!(done["exit_code"], 0, "{done}");
    let log = read(&app.log_path(fresh));
    assert!(log.contains("fresh-start") && !log.contains("from-the-lost-job"), "{log}");
    assert!(read(&app.log_path(lost)).contains("from-the-lost-job"), "the lost job's log is kept");
    server.kill9().await;
}

/// #45 (4): on PostgreSQL, `jpu-share backup FILE` is one `pg_dump` in
/// the custom format, 0600, that `pg_restore` puts back into an empty
/// database with every job; the password never reaches pg_dump's command
/// line. (The SQLite run has its own tests above.)
#[tokio::test]
async fn on_postgres_a_backup_is_a_pg_dump_that_pg_restore_puts_back() {
    let app = TestApp::spawn().await;
    let Some(url) = app.database_url().map(str::to_string) else {
        eprintln!("on SQLite: the tests above cover backups; skipping");
        return;
    };
    let token = app.demo_token().await;
    for _ in 0..3 {
        app.submit_ok(&token, job("kept", 1, "true")).await;
    }
    let file = app.dir.path().join("copy.dump");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .arg("backup")
        .arg(&file)
        .env("JPU__DATABASE__URL", &url)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("jpu-test-password"), "{out:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    // into an empty database of the same cluster
    let restored = format!("{}_restored", url.rsplit_once('/').unwrap().1);
    let cluster = std::env::var("JPU_TEST_POSTGRES").unwrap();
    let psql = |sql: String| {
        let cluster = cluster.clone();
        async move {
            tokio::process::Command::new("psql").args(["-q", "-t", "-A", &cluster, "-c", &sql]).output().await.unwrap()
        }
    };
    psql(format!("DROP DATABASE IF EXISTS {restored} WITH (FORCE)")).await;
    assert!(psql(format!("CREATE DATABASE {restored}")).await.status.success());
    let target = format!("{}/{restored}", cluster.rsplit_once('/').unwrap().0);
    let put_back = tokio::process::Command::new("pg_restore")
        .args(["--no-owner", "--dbname", &target])
        .arg(&file)
        .output()
        .await
        .unwrap();
    assert!(put_back.status.success(), "{put_back:?}");
    let count = tokio::process::Command::new("psql")
        .args(["-q", "-t", "-A", &target, "-c", "SELECT COUNT(*) FROM jobs WHERE name = 'kept'"])
        .output()
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), "3", "{count:?}");
    psql(format!("DROP DATABASE IF EXISTS {restored} WITH (FORCE)")).await;
}
