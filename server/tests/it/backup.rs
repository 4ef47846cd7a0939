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

async fn get_json(app: &TestApp, token: &str, path: &str) -> Value {
    let resp = app.client.get(app.url(path)).bearer_auth(token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    resp.json().await.unwrap()
}

/// `jpu-share migrate-db` with the configured (SQLite) database: its output.
async fn migrate_db(dir: &std::path::Path, to: &str) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .args(["migrate-db", "--to", to])
        .env("JPU__DATABASE__URL", format!("sqlite://{}", dir.join("jpu.db").display()))
        .output()
        .await
        .unwrap()
}

/// #45 (2): a SQLite site's history moves into an empty PostgreSQL
/// database (ids, tokens, finished jobs and their charges, the audit),
/// checked by counts; a server on it goes on where the old one stopped
/// (new ids after the old, the same job folders); a second copy into it
/// is refused and changes nothing, as is a URL that is not PostgreSQL's.
#[tokio::test]
async fn migrate_db_moves_a_sqlite_site_into_an_empty_postgres_database() {
    let Some(cluster) = crate::helpers::postgres_cluster() else {
        eprintln!("needs the PostgreSQL cluster (the suite's PostgreSQL run); skipping");
        return;
    };
    let dir = crate::helpers::shared_tempdir();
    let unisolated = [("JPU__EXECUTOR__ALLOW_UNISOLATED", "true")];
    let old = ServerProcess::start(dir.path(), &unisolated).await;
    let app = TestApp::attach(old.base.clone(), tempfile::tempdir().unwrap());
    let token = app.demo_token().await;
    let mut done = Vec::new();
    for i in 0..3 {
        let id = app.submit_ok(&token, job(&format!("old-{i}"), 1, "echo from-sqlite")).await["id"].as_i64().unwrap();
        done.push(app.wait_state(&token, id, "COMPLETED").await);
    }
    // an admin's act, for the audit log
    let admin = app.admin_token().await;
    let lab =
        app.client.post(app.url("/v1/admin/labs")).bearer_auth(&admin).json(&serde_json::json!({"name": "moved"}));
    assert_eq!(lab.send().await.unwrap().status(), StatusCode::CREATED);
    let usage_before: Value = get_json(&app, &token, "/v1/labs").await;
    old.kill9().await;

    let target_dir = tempfile::tempdir().unwrap();
    let url = crate::helpers::postgres_database_for(&cluster, target_dir.path());
    let refused = migrate_db(dir.path(), "mysql://somewhere/jpu").await;
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("postgres://"), "{refused:?}");

    let out = migrate_db(dir.path(), &url).await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(said.contains("jobs: 3 rows") && said.contains("every count matches"), "{said}");
    assert!(said.contains("api_tokens: 2 rows") && !said.contains("audit_log: 0 rows"), "{said}");

    let new = ServerProcess::start(dir.path(), &[unisolated[0], ("JPU__DATABASE__URL", url.as_str())]).await;
    let app = TestApp::attach(new.base.clone(), tempfile::tempdir().unwrap());
    // the old token, the old jobs with their ids, outputs and charges
    for before in &done {
        let id = before["id"].as_i64().unwrap();
        let now = get_json(&app, &token, &format!("/v1/jobs/{id}")).await;
        assert_eq!(
            (&now["state"], &now["name"], &now["attempts"]),
            (&before["state"], &before["name"], &before["attempts"])
        );
        let log = get_json(&app, &token, &format!("/v1/jobs/{id}/logs")).await;
        assert!(
            log["data"].as_str().unwrap_or_default().contains("from-sqlite"),
            "the job's folder is found again: {log}"
        );
    }
    let usage_after: Value = get_json(&app, &token, "/v1/labs").await;
    let usage = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|l| (l["name"].clone(), l["usage_tflop_s"].as_f64().map(|u| u > 0.0)))
            .collect::<Vec<_>>()
    };
    assert_eq!(usage(&usage_after), usage(&usage_before), "the usage ledger came along");
    let audit = get_json(&app, &admin, "/v1/admin/audit").await;
    assert!(audit.to_string().contains("lab.create"), "the audit log came along: {audit}");
    let next = app.submit_ok(&token, job("new", 1, "echo on-postgres")).await;
    let last = done.last().unwrap()["id"].as_i64().unwrap();
    assert!(next["id"].as_i64().unwrap() > last, "new ids follow the old: {next}");
    app.wait_state(&token, next["id"].as_i64().unwrap(), "COMPLETED").await;

    let again = migrate_db(dir.path(), &url).await;
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds"), "{again:?}");
    let jobs = get_json(&app, &token, "/v1/jobs").await;
    assert_eq!(jobs["jobs"].as_array().map(Vec::len), Some(4), "nothing copied twice: {jobs}");
    drop(new);
    crate::helpers::drop_postgres_database(&url);
}
