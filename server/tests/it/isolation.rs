//! Policy §8 against a researcher with bad intent: the real server (root in
//! CI) and its local executor, each attack as a job would make it. Each
//! test has a uid range of its own, so the processes a test counts by uid
//! are its own job's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jpu_share::executor::local::LocalExecutor;
use jpu_share::executor::Executor;
use jpu_share::policy::oom::EndSignal;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};

fn job(name: &str, command: &str) -> Value {
    json!({"name": name, "command": command, "num_gpus": 1})
}

fn as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

async fn local(first_uid: u32, change: impl FnOnce(&mut jpu_share::config::Settings)) -> TestApp {
    TestApp::spawn_local_with(|s| {
        s.executor.uid_range = format!("{first_uid}-{}", first_uid + 99);
        change(s);
    })
    .await
}

async fn wait_for(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The uid a job ran as, from its log's header.
fn job_uid(log: &str) -> u32 {
    log.split("as uid ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|u| u.parse().ok())
        .expect("uid in the header")
}

/// Live processes owned by `uid`, with their command lines.
fn processes_of(uid: u32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(meta) = std::fs::metadata(entry.path()) else {
            continue;
        };
        let status = read(&entry.path().join("status"));
        if meta.uid() != uid || status.contains("State:\tZ") {
            continue;
        }
        out.push((pid, read(&entry.path().join("cmdline")).replace('\0', " ")));
    }
    out
}

/// Processes anywhere on the host whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().parse::<i32>().is_err() {
            continue;
        }
        let cmd = read(&entry.path().join("cmdline")).replace('\0', " ");
        if cmd.contains(marker) && !read(&entry.path().join("status")).contains("State:\tZ") {
            out.push(cmd);
        }
    }
    out
}

/// A directory every uid may append to: where hijack attempts leave the
/// uid they ran as.
fn probe_dir() -> tempfile::TempDir {
    let dir = crate::helpers::shared_tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

fn uids_recorded(file: &Path) -> Vec<String> {
    read(file).lines().map(str::to_string).collect()
}

#[tokio::test]
async fn env_that_steers_shells_loaders_and_path_lookups_reaches_only_the_job() {
    if !as_root() {
        return;
    }
    let app = local(3_100_000, |_| {}).await;
    let token = app.demo_token().await;
    let probe = probe_dir();
    let p = probe.path().display().to_string();

    // BASH_ENV is expanded by every bash that starts with it
    let bash_env = json!({"name": "bash-env", "command": "echo ran", "num_gpus": 1,
        "env": {"BASH_ENV": format!("$(id -u >> {p}/bash_env)")}});
    let a = app.submit_ok(&token, bash_env).await["id"].as_i64().unwrap();

    // LD_PRELOAD: a library whose constructor records the uid it runs as
    let source = probe.path().join("hook.c");
    std::fs::write(&source, format!(
        "#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void hook(void) {{ FILE *f = fopen(\"{p}/ld_preload\", \"a\"); if (f) {{ fprintf(f, \"%d\\n\", getuid()); fclose(f); }} }}\n"
    )).unwrap();
    let lib = probe.path().join("hook.so");
    let built =
        std::process::Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&source).status().unwrap();
    assert!(built.success(), "cc builds the hook");
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o755)).unwrap();
    let preload = json!({"name": "ld-preload", "command": "echo ran", "num_gpus": 1, "env": {"LD_PRELOAD": lib.display().to_string()}});
    let b = app.submit_ok(&token, preload).await["id"].as_i64().unwrap();

    // PATH: one job plants the programs the wrapper runs, a second puts
    // them first on its PATH
    // (in a folder both reach: each job's /tmp is its own)
    let plant = format!(
        r#"mkdir -p {p}/bin; for tool in timeout unshare setpriv env bash sleep; do printf '#!/bin/sh\nid -u >> {p}/path\nexec /usr/bin/%s "$@"\n' "$tool" > "{p}/bin/$tool"; chmod 755 "{p}/bin/$tool"; done; echo planted"#
    );
    let c = app.submit_ok(&token, job("plant", &plant)).await["id"].as_i64().unwrap();
    app.wait_state(&token, c, "COMPLETED").await;
    let hijack = json!({"name": "path", "command": "sleep 0.1; echo ran", "num_gpus": 1,
        "env": {"PATH": format!("{p}/bin:/usr/bin:/bin")}});
    let d = app.submit_ok(&token, hijack).await["id"].as_i64().unwrap();

    for id in [a, b, d] {
        let done = app.wait_state(&token, id, "COMPLETED").await;
        assert_eq!(done["exit_code"], 0, "{done}");
    }
    let uid = job_uid(&read(&app.log_path(a))).to_string();
    for file in ["bash_env", "ld_preload", "path"] {
        let uids = uids_recorded(&probe.path().join(file));
        // the job's own processes ran it (so the probe works) ...
        assert!(uids.contains(&uid), "{file}: the job itself never ran it: {uids:?}");
        // ... and nothing with the server's privileges did
        assert!(uids.iter().all(|u| *u == uid), "{file}: ran as {uids:?}, the job is {uid}");
    }

    // exported bash functions cannot even be named
    let body = json!({"name": "func", "command": "true", "num_gpus": 1, "env": {"BASH_FUNC_timeout%%": "() { id; }"}});
    let message = assert_error(app.submit(&token, body).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(message.contains("BASH_FUNC_timeout%%"), "{message}");
}

#[tokio::test]
async fn users_without_a_uid_each_get_their_own_and_cannot_touch_each_others_jobs() {
    if !as_root() {
        return;
    }
    let app = local(3_100_100, |_| {}).await;
    let admin = app.admin_token().await;
    let alice = app.researcher(&admin, "alice", "lab-a").await;
    let mallory = app.researcher(&admin, "mallory", "lab-b").await;
    let victim = "echo secret-weights > \"$JOB_OUTPUT_DIR/model.pt\"; echo holding; until [ -e \"$JOB_OUTPUT_DIR/release\" ]; do sleep 0.05; done";
    let a = app.submit_ok(&alice, job("victim", victim)).await["id"].as_i64().unwrap();
    app.wait_state(&alice, a, "RUNNING").await;
    wait_for("the victim's output", 30, || read(&app.log_path(a)).contains("holding")).await;
    let alice_uid = job_uid(&read(&app.log_path(a)));
    let target = processes_of(alice_uid).first().map(|p| p.0).expect("alice's job has processes");

    let out = app.output_dir(a).display().to_string();
    let attack = format!(
        r#"kill -9 {target} 2>/dev/null && echo killed
cat "{out}/model.pt" 2>/dev/null && echo read-it
echo pwned 2>/dev/null > "{out}/model.pt" && echo wrote-it
ls "{out}" 2>/dev/null && echo listed-it
echo "visible=$(ls /proc | grep -c '^[0-9]')"
echo done"#
    );
    let m = app.submit_ok(&mallory, job("attack", &attack)).await["id"].as_i64().unwrap();
    app.wait_state(&mallory, m, "COMPLETED").await;
    let log = read(&app.log_path(m));
    assert_ne!(job_uid(&log), alice_uid, "two users share a uid:\n{log}");
    for what in ["killed", "read-it", "wrote-it", "listed-it"] {
        assert!(!log.contains(&format!("\n{what}\n")), "mallory's job {what}:\n{log}");
    }
    // its own namespace: a handful of its own processes, none of alice's
    let visible: usize =
        log.split("visible=").nth(1).and_then(|r| r.lines().next()).and_then(|n| n.parse().ok()).expect("count");
    assert!(visible < 10, "mallory sees {visible} processes");
    let job: Value = app.job(&alice, a).await.json().await.unwrap();
    assert_eq!(job["state"], "RUNNING", "{job}");
    assert_eq!(read(&app.output_dir(a).join("model.pt")).trim(), "secret-weights");
    std::fs::write(app.output_dir(a).join("release"), "").unwrap();
    app.wait_state(&alice, a, "COMPLETED").await;
}

#[tokio::test]
async fn a_job_cannot_read_the_database_or_list_the_data_directory() {
    if !as_root() {
        return;
    }
    let app = local(3_100_200, |_| {}).await;
    if app.on_postgres() {
        eprintln!("on PostgreSQL the database is no file beside the jobs; skipping");
        return;
    }
    let token = app.demo_token().await;
    let db = app.db_path();
    let dir = db.parent().unwrap().to_path_buf();
    let script = format!(
        "head -c 16 '{}' >/dev/null 2>&1 && echo read-db\nls '{}' >/dev/null 2>&1 && echo listed\necho done",
        db.display(),
        dir.display()
    );
    let id = app.submit_ok(&token, job("steal", &script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let log = read(&app.log_path(id));
    assert!(log.contains("\ndone\n") && !log.contains("read-db") && !log.contains("listed"), "{log}");
    assert_eq!(std::fs::metadata(&db).unwrap().permissions().mode() & 0o777, 0o600);
    // jobs reach their output directory inside it by path, nothing more
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o711);
}

/// Children that leave the job's process group or session.
fn escapes(marker: u32) -> String {
    format!(
        "setsid sleep {marker}1 & nohup sleep {marker}2 >/dev/null 2>&1 & (sleep {marker}3 &)\n(setsid bash -c 'trap \"\" TERM HUP; sleep {marker}4' &)\necho ready"
    )
}

async fn no_process_left(marker: u32) {
    let marker = format!("sleep {marker}");
    wait_for("the escaped processes to end", 10, || processes_with(&marker).is_empty()).await;
}

#[tokio::test]
async fn setsid_nohup_and_double_forks_end_with_the_job_on_cancel_and_at_its_end() {
    if !as_root() {
        return;
    }
    let app = local(3_100_300, |_| {}).await;
    let token = app.demo_token().await;
    let a = app.submit_ok(&token, job("escape-cancel", &format!("{}\nsleep 300", escapes(7101)))).await["id"]
        .as_i64()
        .unwrap();
    let b = app.submit_ok(&token, job("escape-end", &format!("{}\nsleep 0.5", escapes(7102)))).await["id"]
        .as_i64()
        .unwrap();
    app.wait_state(&token, a, "RUNNING").await;
    wait_for("the escapes", 30, || processes_with("sleep 71014").len() == 1).await;
    assert_eq!(app.cancel(&token, a).await.status(), 202);
    app.wait_state(&token, a, "CANCELLED").await;
    no_process_left(7101).await;
    app.wait_state(&token, b, "COMPLETED").await;
    no_process_left(7102).await;
}

#[tokio::test]
async fn escapes_end_with_the_job_at_its_time_limit() {
    if !as_root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wake = std::sync::Arc::new(tokio::sync::Notify::new());
    let executor = LocalExecutor::new(dir.path(), Duration::from_secs(1), "apptainer", wake.clone());
    let command = format!("{}\nsleep 300", escapes(7103));
    let request = crate::helpers::one_gpu_attempt(&executor, &command, Duration::from_secs(2), 3_100_401);
    executor.start(request).await.unwrap();
    let finished = crate::helpers::wait_finished(&executor, &wake).await;
    assert_eq!(finished[0].end, EndSignal::TimeLimit);
    no_process_left(7103).await;
}

#[tokio::test]
async fn a_job_over_its_ram_ends_host_oom() {
    if !as_root() {
        return;
    }
    let app = local(3_100_500, |_| {}).await;
    let admin = app.admin_token().await;
    app.small_memory(&admin).await;
    let token = app.demo_token().await;
    let hog = "echo start; python3 -c 'b = bytearray(3 << 30); print(len(b))'; echo after";
    let id = app.submit_ok(&token, job("hog", hog)).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    assert_eq!(done["state"], "FAILED", "{done}");
    assert_eq!(done["end_reason"], "HOST_OOM", "{done}");
    let log = read(&app.log_path(id));
    assert!(log.contains("1 GiB RAM") && !log.contains("3221225472"), "{log}");
}

#[tokio::test]
async fn a_fork_bomb_is_held_by_the_process_limit_and_ends_with_the_job() {
    if !as_root() {
        return;
    }
    let app = local(3_100_600, |s| s.executor.pids_per_gpu = 40).await;
    let token = app.demo_token().await;
    let bomb = "echo ready\nbomb() { bomb | bomb & }\nbomb\nsleep 300";
    let id = app.submit_ok(&token, job("bomb", bomb)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    wait_for("the bomb", 30, || read(&app.log_path(id)).contains("ready")).await;
    let uid = job_uid(&read(&app.log_path(id)));
    // it grows to its limit and no further (40 + the wrapper's 8)
    let mut most = 0;
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(3) {
        most = most.max(processes_of(uid).len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!((20..=48).contains(&most), "{most} processes");
    let asked = Instant::now();
    assert_eq!(app.healthz().await.status(), 200);
    assert!(asked.elapsed() < Duration::from_secs(1), "healthz took {:?}", asked.elapsed());
    assert_eq!(app.cancel(&token, id).await.status(), 202);
    app.wait_state(&token, id, "CANCELLED").await;
    wait_for("the bomb's processes to end", 10, || processes_of(uid).is_empty()).await;
}

#[tokio::test]
async fn a_fifo_in_the_output_directory_is_refused_at_once() {
    if !as_root() {
        return;
    }
    let app = local(3_100_700, |_| {}).await;
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("fifo", "mkfifo \"$JOB_OUTPUT_DIR/pipe\"")).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let asked = Instant::now();
    let requests = (0..50).map(|_| {
        app.client
            .get(app.url(&format!("/v1/jobs/{id}/files/pipe")))
            .bearer_auth(&token)
            .timeout(Duration::from_secs(5))
            .send()
    });
    for resp in futures_util::future::join_all(requests).await {
        assert_eq!(resp.expect("answered, not hung").status(), StatusCode::NOT_FOUND);
    }
    assert!(asked.elapsed() < Duration::from_secs(3), "{:?}", asked.elapsed());
    assert_eq!(app.healthz().await.status(), 200);
}

#[tokio::test]
async fn workspace_creates_are_capped_per_lab_and_builds_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.workspaces.max_per_lab = 2;
    settings.workspaces.max_concurrent_builds = 1;
    // a build that takes its time: the stand-in "builds" for 2 s, then fails
    settings.executor.apptainer = slow_apptainer().display().to_string();
    let app = TestApp::spawn_with(dir, settings).await;
    let token = app.demo_token().await;
    let create = |name: String, token: String| {
        app.client
            .post(app.url("/v1/workspaces"))
            .bearer_auth(token)
            .json(&json!({"name": name, "base_image": "python:3.11-slim"}))
            .send()
    };
    // 300 at once: one build starts, the rest are told why not
    let burst = (0..300).map(|i| create(format!("ws-{i}"), token.clone()));
    let mut created = Vec::new();
    for (i, resp) in futures_util::future::join_all(burst).await.into_iter().enumerate() {
        let resp = resp.unwrap();
        match resp.status() {
            StatusCode::CREATED => created.push(format!("ws-{i}")),
            StatusCode::TOO_MANY_REQUESTS => {
                let body: Value = resp.json().await.unwrap();
                assert_eq!(body["error"]["code"], "QUEUE_LIMIT", "{body}");
                assert!(body["error"]["message"].as_str().unwrap().contains("one build per lab"), "{body}");
            }
            other => panic!("{other}"),
        }
    }
    assert_eq!(created.len(), 1, "one build per lab at a time");
    // the server's cap: another lab waits for the running build
    let admin = app.admin_token().await;
    let other = app.researcher(&admin, "olga", "lab-o").await;
    let message =
        assert_error(create("o-1".into(), other.clone()).await.unwrap(), StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT")
            .await;
    assert!(message.contains("builds are running on this server"), "{message}");
    let failed = |name: String| {
        let (app, token) = (&app, token.clone());
        async move {
            app.wait_until(&format!("{name} FAILED"), || async {
                let ws: Value = app.get(Some(&token), &format!("/v1/workspaces/{name}")).await.json().await.unwrap();
                ws["status"] == "FAILED"
            })
            .await
        }
    };
    failed(created[0].clone()).await;
    // the lab's cap, at its edge: a second workspace, not a third
    assert_eq!(create("second".into(), token.clone()).await.unwrap().status(), StatusCode::CREATED);
    failed("second".into()).await;
    let message = assert_error(
        create("third".into(), token.clone()).await.unwrap(),
        StatusCode::TOO_MANY_REQUESTS,
        "QUEUE_LIMIT",
    )
    .await;
    assert!(message.contains("already has 2 workspaces"), "{message}");
    // rebuilding a FAILED one is not a new one
    assert_eq!(create("second".into(), token.clone()).await.unwrap().status(), StatusCode::CREATED);
}

/// A stand-in Apptainer (the real one cannot run here) whose build takes
/// two seconds.
fn slow_apptainer() -> PathBuf {
    let dir = tempfile::tempdir().unwrap().keep();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tool = dir.join("apptainer");
    std::fs::write(&tool, "#!/bin/sh\nsleep 2\nexit 1\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    tool
}

#[tokio::test]
async fn a_job_past_its_log_or_output_limit_is_stopped_and_told_why() {
    if !as_root() {
        return;
    }
    let app = local(3_100_800, |s| {
        s.executor.max_log_bytes = 256 * 1024;
        s.executor.max_output_bytes = 1 << 20;
    })
    .await;
    let token = app.demo_token().await;
    let chatty = "yes 'a line of output' | head -c 3000000; sleep 300";
    let big = "head -c 3000000 /dev/zero > \"$JOB_OUTPUT_DIR/blob\"; echo wrote; sleep 300";
    // under both limits (the log's header lines included)
    let modest = "yes 'a line of output' | head -c 200000; head -c 900000 /dev/zero > \"$JOB_OUTPUT_DIR/blob\"";
    let a = app.submit_ok(&token, job("chatty", chatty)).await["id"].as_i64().unwrap();
    let b = app.submit_ok(&token, job("big", big)).await["id"].as_i64().unwrap();
    let c = app.submit_ok(&token, job("modest", modest)).await["id"].as_i64().unwrap();
    for (id, reason, setting) in
        [(a, "LOG_LIMIT", "executor.max_log_bytes"), (b, "OUTPUT_LIMIT", "executor.max_output_bytes")]
    {
        let done = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
        assert_eq!((done["state"].as_str(), done["end_reason"].as_str()), (Some("FAILED"), Some(reason)), "{done}");
        let log = read(&app.log_path(id));
        assert!(
            log.contains(&format!("({setting}): the attempt is stopped")),
            "{}",
            &log[log.len().saturating_sub(500)..]
        );
    }
    app.wait_state(&token, c, "COMPLETED").await;
    // F12: its file-size limit stopped the write at the output limit,
    // not the next walk of the directory
    let blob = std::fs::metadata(app.output_dir(b).join("blob")).unwrap().len();
    assert!(blob <= (1 << 20) + 1024, "the file stopped at the limit: {blob} bytes");
}

/// F12: below `executor.min_free_bytes` on the output's disk, a job that
/// writes is stopped and told why; one that does not write runs on.
#[tokio::test]
async fn a_nearly_full_disk_stops_the_jobs_that_write_to_it() {
    if !as_root() {
        return;
    }
    // every disk is "nearly full" for this server
    let app = local(3_100_900, |s| s.executor.min_free_bytes = u64::MAX / 2).await;
    let token = app.demo_token().await;
    let writer = "for i in $(seq 1 600); do head -c 65536 /dev/zero >> \"$JOB_OUTPUT_DIR/steps\"; sleep 0.1; done";
    let a = app.submit_ok(&token, job("writer", writer)).await["id"].as_i64().unwrap();
    let b = app.submit_ok(&token, job("quiet", "sleep 2; echo done")).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, a, "its end", |j| j["ended_at"].is_string()).await;
    assert_eq!((done["state"].as_str(), done["end_reason"].as_str()), (Some("FAILED"), Some("OUTPUT_LIMIT")), "{done}");
    let log = read(&app.log_path(a));
    assert!(log.contains("(executor.min_free_bytes)") && log.contains("still growing"), "{log}");
    app.wait_state(&token, b, "COMPLETED").await;
}

#[tokio::test]
async fn no_two_users_share_a_uid_configured_or_allocated() {
    let app = TestApp::spawn().await;
    let admin = app.admin_token().await;
    let user = |name: &str, uid: Option<i64>| json!({"username": name, "password": format!("{name}-password"), "lab": "demo-lab", "role": "researcher", "unix_uid": uid});
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/users", user("carol", Some(5000))).await.status(),
        StatusCode::CREATED
    );
    let message = assert_error(
        app.post(Some(&admin), "/v1/admin/users", user("dave", Some(5000))).await,
        StatusCode::CONFLICT,
        "CONFLICT",
    )
    .await;
    assert!(message.contains("already carol's"), "{message}");
    assert_eq!(app.post(Some(&admin), "/v1/admin/users", user("erin", None)).await.status(), StatusCode::CREATED);
    // demo was given the range's second uid at start (admin the first)
    let patch = |uid: i64| {
        app.client.patch(app.url("/v1/admin/users/erin")).bearer_auth(&admin).json(&json!({"unix_uid": uid})).send()
    };
    let message = assert_error(patch(3_000_001).await.unwrap(), StatusCode::CONFLICT, "CONFLICT").await;
    assert!(message.contains("already demo's"), "{message}");
    assert_eq!(patch(5001).await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn a_server_that_is_not_root_refuses_jobs_unless_told_it_may_run_them_unisolated() {
    if !as_root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = crate::process::ServerProcess::start_as_nobody(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let message =
        assert_error(app.submit(&token, job("refused", "id")).await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    assert!(message.contains("does not run as root") && message.contains("executor.allow_unisolated"), "{message}");
    server.kill9().await;
    let dir = app.stop().await;

    let server =
        crate::process::ServerProcess::start_as_nobody(dir.path(), &[("JPU__EXECUTOR__ALLOW_UNISOLATED", "true")])
            .await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("laptop", "echo \"uid=$(id -u)\"")).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let log = read(&app.log_path(id));
    assert!(log.contains("NOT isolated") && log.contains("uid=65534"), "{log}");
    server.kill9().await;
}

/// Two processes of a 2-GPU job meet over 127.0.0.1 (a rendezvous as
/// `torchrun --standalone` makes), through a multiprocessing queue (a
/// POSIX semaphore in the job's own /dev/shm); the job still has no other
/// interface, no route, and cannot reach the server's port.
pub const RENDEZVOUS: &str = r#"
import multiprocessing as mp, os, socket, sys
def rank0(port_q):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
    port_q.put(s.getsockname()[1])
    c, _ = s.accept(); c.sendall(b"rank0 got " + c.recv(100)); c.close()
q = mp.Queue(); p = mp.Process(target=rank0, args=(q,)); p.start()
c = socket.create_connection(("127.0.0.1", q.get(timeout=20)), timeout=20)
c.sendall(b"hello from rank1"); print(c.recv(100).decode()); p.join()
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3); print("reached the server")
except OSError as e:
    print("server unreachable", e.errno)
names = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print("interfaces", ",".join(sorted(names)))
print("routes", len(open("/proc/net/route").read().splitlines()) - 1)
"#;

#[tokio::test]
async fn a_job_talks_to_itself_over_loopback_and_reaches_nothing_else() {
    if !as_root() {
        return;
    }
    let app = local(3_100_800, |_| {}).await;
    let token = app.demo_token().await;
    let port = app.base.rsplit(':').next().unwrap().to_string();
    let script = format!("python3 - {port} <<'EOF'\n{RENDEZVOUS}\nEOF");
    let body = json!({"name": "rendezvous", "command": script, "num_gpus": 2});
    let id = app.submit_ok(&token, body).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    let log = read(&app.log_path(id));
    assert_eq!(done["state"], "COMPLETED", "{log}");
    assert!(log.contains("rank0 got hello from rank1"), "the rendezvous over loopback: {log}");
    assert!(log.contains("server unreachable"), "{log}");
    assert!(log.contains("interfaces lo\n"), "only loopback: {log}");
    assert!(log.contains("routes 0\n"), "no route out: {log}");
}

/// What a job leaves in the host's shared scratch places and IPC.
fn host_leftovers(marker: &str, uid: u32) -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().contains(marker) {
                found.push(entry.path().display().to_string());
            }
        }
    }
    // /proc/sysvipc/shm: key shmid perms size cpid lpid nattch uid …
    for line in read(Path::new("/proc/sysvipc/shm")).lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.get(7) == Some(&uid.to_string().as_str()) {
            found.push(format!("SysV segment {}", cols[1]));
        }
    }
    found
}

#[tokio::test]
async fn a_job_leaves_no_memory_or_files_behind_in_shared_places() {
    if !as_root() {
        return;
    }
    let app = local(3_100_900, |_| {}).await;
    let admin = app.admin_token().await;
    app.small_memory(&admin).await;
    let token = app.demo_token().await;
    let marker = "jpu-leftover-3100900";
    let script = format!(
        "for d in /tmp /var/tmp /dev/shm /run/lock; do head -c 8M /dev/zero > $d/{marker} && echo wrote $d; done\n\
         ipcmk -M 16777216 && echo made a segment\n\
         echo ready\nsleep 300"
    );
    let id = app.submit_ok(&token, job("litter", &script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    wait_for("the job to write", 30, || read(&app.log_path(id)).contains("ready")).await;
    let log = read(&app.log_path(id));
    let uid = job_uid(&log);
    for d in ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"] {
        assert!(log.contains(&format!("wrote {d}\n")), "{d} is writable inside: {log}");
    }
    assert!(log.contains("made a segment"), "{log}");
    assert_eq!(host_leftovers(marker, uid), Vec::<String>::new(), "private while it runs");
    assert_eq!(app.cancel(&token, id).await.status(), 202);
    app.wait_state(&token, id, "CANCELLED").await;
    // at its edge: the scratch space counts against the job's 1 GiB of RAM
    let hoard = format!("head -c 1100M /dev/zero > /dev/shm/{marker}-big && echo wrote-it-all; echo after");
    let big = app.submit_ok(&token, job("hoard", &hoard)).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, big, "its end", |j| j["ended_at"].is_string()).await;
    let log = read(&app.log_path(big));
    assert!(!log.contains("wrote-it-all"), "held to its limit: {done} {log}");
    assert_eq!(host_leftovers(marker, job_uid(&log)), Vec::<String>::new(), "nothing left of the hoard");
    assert_eq!(host_leftovers(marker, uid), Vec::<String>::new(), "nothing left when it ends");
}

#[tokio::test]
async fn jobs_cannot_create_user_namespaces_unless_a_setting_allows() {
    if !as_root() {
        return;
    }
    let script = "unshare -Ur true 2>/dev/null && echo userns-made || echo userns-refused\n\
                  python3 -c 'import subprocess, threading; t = threading.Thread(target=print, args=(\"thread-ok\",)); t.start(); t.join(); subprocess.run([\"echo\", \"child-ok\"])'\n\
                  echo done";
    let app = local(3_101_000, |_| {}).await;
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("userns", script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    let log = read(&app.log_path(id));
    assert!(log.contains("userns-refused") && !log.contains("userns-made"), "{log}");
    assert!(log.contains("thread-ok") && log.contains("child-ok"), "threads and processes still start: {log}");
    assert!(log.contains("done"), "{log}");

    let host_allows = read(Path::new("/proc/sys/user/max_user_namespaces")).trim() != "0"
        && read(Path::new("/proc/sys/kernel/unprivileged_userns_clone")).trim() != "0";
    let allowed = local(3_101_100, |s| s.executor.allow_user_namespaces = true).await;
    let token = allowed.demo_token().await;
    let id = allowed.submit_ok(&token, job("userns-allowed", script)).await["id"].as_i64().unwrap();
    allowed.wait_state(&token, id, "COMPLETED").await;
    let log = read(&allowed.log_path(id));
    assert!(log.contains("may create user namespaces"), "the log says so: {log}");
    if host_allows {
        assert!(log.contains("userns-made"), "{log}");
    }
}

#[tokio::test]
async fn descriptors_the_server_inherited_do_not_reach_jobs() {
    if !as_root() {
        return;
    }
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    let secret = tempfile::NamedTempFile::new().unwrap();
    // opened without close-on-exec, as a parent process might hand one down
    let fd = open(secret.path(), OFlag::O_RDONLY, Mode::empty()).unwrap();
    let app = local(3_101_200, |_| {}).await;
    let token = app.demo_token().await;
    let id = app.submit_ok(&token, job("fds", "ls -l /proc/self/fd/ /proc/$$/fd/; echo listed")).await["id"]
        .as_i64()
        .unwrap();
    app.wait_state(&token, id, "COMPLETED").await;
    drop(fd);
    let log = read(&app.log_path(id));
    assert!(log.contains("listed"), "{log}");
    assert!(!log.contains(&secret.path().display().to_string()), "the server's file reached the job: {log}");
}

#[tokio::test]
async fn listings_and_downloads_never_follow_a_jobs_links() {
    if !as_root() {
        return;
    }
    let app = local(3_101_300, |_| {}).await;
    let token = app.demo_token().await;
    let admin = app.admin_token().await;
    let other = app.researcher(&admin, "victim", "demo-lab").await;
    let victim =
        app.submit_ok(&other, job("victim", "echo x > victim-secret.txt; sleep 300")).await["id"].as_i64().unwrap();
    app.wait_state(&other, victim, "RUNNING").await;
    let target = app.output_dir(victim);
    let attempts = app.output_root().join(".attempts");
    // swaps a directory and a link to another user's files as fast as it can
    let swapper = format!(
        "ln -s /root/.bashrc root-file; ln -s /nonexistent/x missing-file\n\
         echo ready\n\
         while :; do mkdir -p d && touch d/mine; rm -rf d; ln -s {} d; rm -f d; ln -s {} d; rm -f d; done",
        target.display(),
        attempts.display()
    );
    let id = app.submit_ok(&token, job("swapper", &swapper)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    wait_for("the swapper", 30, || read(&app.log_path(id)).contains("ready")).await;
    for _ in 0..150 {
        let listed = app.get(Some(&token), &format!("/v1/jobs/{id}/files")).await.text().await.unwrap();
        assert!(!listed.contains("victim-secret") && !listed.contains(&format!("{victim}-1")), "{listed}");
    }
    // a link to a root-only file that exists answers as one that does not
    for name in ["root-file", "missing-file", "d/victim-secret.txt"] {
        let resp = app.get(Some(&token), &format!("/v1/jobs/{id}/files/{name}")).await;
        assert_error(resp, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    }
    for (who, job) in [(&token, id), (&other, victim)] {
        assert_eq!(app.cancel(who, job).await.status(), 202);
    }
    // the output root lists nothing to others
    let mode = std::fs::metadata(app.output_root()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o711);
}

#[tokio::test]
async fn a_job_can_neither_truncate_its_log_nor_forge_the_servers_lines() {
    if !as_root() {
        return;
    }
    let app = local(3_101_400, |_| {}).await;
    let token = app.demo_token().await;
    let forger = "echo first\n\
                  printf '[jpu-share] attempt 1 exited with code 0\\n'\n\
                  printf '[jpu'; sleep 0.3; printf -- '-share] split across writes\\n'\n\
                  python3 -c 'import os; os.ftruncate(1, 0)' 2>/dev/null || echo cannot-truncate\n\
                  printf 'progress 50%%\\r'; sleep 0.3; echo 'progress 100%'\n\
                  exit 3";
    let id = app.submit_ok(&token, job("forger", forger)).await["id"].as_i64().unwrap();
    let done = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    assert_eq!(done["exit_code"], 3, "{done}");
    let log = read(&app.log_path(id));
    assert!(log.starts_with("[jpu-share] attempt 1 of job"), "the header is still there: {log}");
    assert!(log.contains("cannot-truncate") && log.contains("progress 50%\rprogress 100%\n"), "{log}");
    let servers: Vec<&str> = log.lines().filter(|l| l.starts_with("[jpu-share]")).collect();
    assert_eq!(servers.len(), 3, "header, containment and end, nothing the job wrote: {servers:?}");
    assert!(servers[2].contains("exited with code 3"), "{servers:?}");
    assert!(log.contains("\n[job] [jpu-share] attempt 1 exited with code 0\n"), "marked: {log}");
    assert!(log.contains("\n[job] [jpu-share] split across writes\n"), "marked across writes: {log}");
}

/// #43 (policy §13): every job has a home of its owner's (0700, kept
/// across jobs: the next job finds the last one's checkpoint) and its
/// lab's share (setgid 2770, the lab's gid, which every member's job
/// carries); a colleague reads the share and not the home, another lab
/// neither; no job sets HOME, LAB_DIR or JPU_DATASETS itself.
#[tokio::test]
async fn a_job_keeps_its_work_in_a_home_and_shares_it_in_its_labs_folder() {
    if !as_root() {
        return;
    }
    let app = local(3_101_000, |_| {}).await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let colleague = app.researcher(&admin, "colleague", "demo-lab").await;
    assert_eq!(
        app.post(Some(&admin), "/v1/admin/labs", json!({"name": "other-lab"})).await.status(),
        StatusCode::CREATED
    );
    let stranger = app.researcher(&admin, "stranger", "other-lab").await;

    let first = "echo step-1 > \"$HOME/checkpoint\" && echo shared > \"$LAB_DIR/results\" && echo \"home=$HOME lab=$LAB_DIR data=$JPU_DATASETS\"";
    let id = app.run_job(&demo, "first", first).await;
    let log = read(&app.log_path(id));
    let storage = app.dir.path().to_path_buf();
    let storage = crate::helpers::storage_root_for(&storage);
    assert!(
        log.contains(&format!(
            "home={}/home/demo lab={}/labs/demo-lab data={}/datasets",
            storage.display(),
            storage.display(),
            storage.display()
        )),
        "{log}"
    );
    let id = app.run_job(&demo, "next", "cat \"$HOME/checkpoint\"").await;
    assert!(read(&app.log_path(id)).contains("step-1"), "the next job finds the checkpoint");

    let home = std::fs::metadata(storage.join("home/demo")).unwrap();
    assert_eq!(home.mode() & 0o7777, 0o700);
    let share = std::fs::metadata(storage.join("labs/demo-lab")).unwrap();
    assert_eq!((share.mode() & 0o7777, share.uid()), (0o3770, 0), "setgid and sticky");
    assert!(share.gid() >= 4_000_000, "the lab's own gid: {}", share.gid());
    let results = std::fs::metadata(storage.join("labs/demo-lab/results")).unwrap();
    assert_eq!(results.gid(), share.gid(), "what a member writes stays the lab's");

    let peek = "cat \"$LAB_DIR/results\"; cat /proc/self/status | grep Groups; ls \"$(dirname \"$HOME\")/demo\" && echo READ-HOME; true";
    let id = app.run_job(&colleague, "peek", peek).await;
    let log = read(&app.log_path(id));
    assert!(log.contains("shared") && !log.contains("READ-HOME"), "a colleague reads the share, not the home: {log}");
    let intrude = format!("cat {}/labs/demo-lab/results && echo READ-SHARE; true", storage.display());
    let id = app.run_job(&stranger, "intrude", &intrude).await;
    assert!(!read(&app.log_path(id)).contains("READ-SHARE"), "another lab reads nothing");
    // a member who moves to another lab reaches the old share no more,
    // even with a job submitted before the move
    let nodes = ["node-4090", "node-3080"];
    for node in nodes {
        app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/drain"), json!({})).await;
    }
    let queued = app.submit_ok(&colleague, job("queued", &format!("{intrude}; echo lab=$LAB_DIR"))).await;
    let moved = app.patch(&admin, "/v1/admin/users/colleague", json!({"lab": "other-lab"})).await;
    assert_eq!(moved.status(), StatusCode::OK);
    for node in nodes {
        let resumed = app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/resume"), json!({})).await;
        assert!(resumed.status().is_success());
    }
    let done = app.wait_state(&admin, queued["id"].as_i64().unwrap(), "COMPLETED").await;
    let log = read(&app.log_path(done["id"].as_i64().unwrap()));
    assert!(!log.contains("READ-SHARE") && log.contains("labs/other-lab"), "{log}");

    for name in ["HOME", "LAB_DIR", "JPU_DATASETS"] {
        let body = json!({"name": "sly", "command": "true", "num_gpus": 1, "env": {name: "/etc"}});
        assert_error(app.submit(&demo, body).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    }
}

/// #43: what a home holds is measured after its job ends; over its quota,
/// the next submit is refused with `QUOTA_EXCEEDED` naming the place, its
/// usage and its quota (a running job goes on), and once space is freed
/// submits pass again.
#[tokio::test]
async fn a_home_over_its_quota_refuses_new_submits_and_running_jobs_go_on() {
    if !as_root() {
        return;
    }
    // 100 kB for a home; measured every 0.6 s
    let app = local(3_101_100, |s| {
        s.storage.home_quota_gb = 0.0001;
        s.storage.scan_minutes = 0.01;
    })
    .await;
    let demo = app.demo_token().await;
    let storage: Value = app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap();
    assert_eq!(storage["home"]["quota_bytes"], 100_000, "{storage}");
    assert!(storage["home"]["path"].as_str().unwrap().ends_with("/home/demo"), "{storage}");
    let runner = app.submit_ok(&demo, job("long", "sleep 3; echo still-here")).await["id"].as_i64().unwrap();
    app.wait_state(&demo, runner, "RUNNING").await;
    app.run_job(&demo, "fill", "head -c 300000 /dev/urandom > \"$HOME/big\"").await;
    app.wait_until("the home measured over its quota", || async {
        let s: Value = app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap();
        s["home"]["used_bytes"].as_u64().unwrap_or(0) > 100_000
    })
    .await;
    let refused = app.submit(&demo, job("more", "true")).await;
    let message = assert_error(refused, StatusCode::CONFLICT, "QUOTA_EXCEEDED").await;
    assert!(message.contains("home") && message.contains("100000"), "{message}");
    let done = app.wait_state(&demo, runner, "COMPLETED").await;
    assert_eq!(done["exit_code"], 0, "the running job was not stopped");
    let home = crate::helpers::storage_root_for(app.dir.path()).join("home/demo");
    std::fs::remove_file(home.join("big")).unwrap();
    app.wait_until("the home measured within its quota", || async {
        let s: Value = app.get(Some(&demo), "/v1/me/storage").await.json().await.unwrap();
        s["home"]["used_bytes"].as_u64().unwrap_or(u64::MAX) <= 100_000
    })
    .await;
    app.submit_ok(&demo, job("again", "true")).await;
}
