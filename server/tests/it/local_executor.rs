//! The local executor end to end: real bash processes started by the
//! server's scheduler loop, their logs and output directories, cancel with
//! grace, time limit, GPU-OOM retry, and `kill -9` of the server.

use std::time::Duration;

use jpu_share::executor::local::LocalExecutor;
use jpu_share::executor::Executor;
use jpu_share::policy::oom::EndSignal;
use serde_json::{json, Value};

use crate::helpers::TestApp;
use crate::process::ServerProcess;

/// Runs until the test creates `release` in its output directory.
pub(crate) const HOLD: &str =
    r#"echo holding; until [ -e "$JOB_OUTPUT_DIR/release" ]; do sleep 0.05; done; echo released"#;

pub(crate) fn job(name: &str, gpus: u32, command: &str) -> Value {
    json!({"name": name, "command": command, "num_gpus": gpus})
}

fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}

pub(crate) async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

pub(crate) fn release(app: &TestApp, id: i64) {
    std::fs::write(app.output_dir(id).join("release"), "").expect("release file");
}

#[tokio::test]
async fn a_job_runs_as_a_real_process_with_its_env_and_without_network() {
    let app = TestApp::spawn_local().await;
    let token = app.demo_token().await;
    let script = r#"echo "id=$JOB_ID attempt=$JOB_ATTEMPT gpus=$CUDA_VISIBLE_DEVICES tier=$JPU_TIER out=$JOB_OUTPUT_DIR"
echo "uid=$(id -u)"
echo "ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ,)"
echo "cwd=$(pwd)"
echo 42 > "$JOB_OUTPUT_DIR/result.txt""#;
    let id = app.submit_ok(&token, job("env-check", 2, script)).await["id"].as_i64().unwrap();
    let done = app.wait_state(&token, id, "COMPLETED").await;
    assert_eq!(done["exit_code"], 0);
    let gpus: Vec<String> = done["gpu_indices"].as_array().unwrap().iter().map(|g| g.to_string()).collect();
    let out = app.output_dir(id);
    let log = read(&app.log_path(id));
    let expected = format!(
        "id={id} attempt=1 gpus={} tier={} out={}",
        gpus.join(","),
        done["tier"].as_str().unwrap(),
        out.display()
    );
    assert!(log.contains(&expected), "log lacks `{expected}`:\n{log}");
    assert!(log.contains(&format!("cwd={}", out.display())), "{log}");
    assert!(log.starts_with("[jpu-share] attempt 1 of job"), "{log}");
    assert_eq!(read(&out.join("result.txt")).trim(), "42");
    if running_as_root() {
        // the demo user has no configured uid: one of its own from
        // executor.uid_range, in a namespace with only loopback
        let uid: u32 =
            log.split("uid=").nth(1).and_then(|r| r.lines().next()).and_then(|u| u.parse().ok()).expect("uid line");
        assert!((3_000_000..=3_999_999).contains(&uid), "{log}");
        assert!(log.contains("ifaces=lo,\n"), "{log}");
    } else {
        assert!(log.contains("HAS network access"), "{log}");
    }
}

#[tokio::test]
async fn a_cuda_oom_on_the_12gb_tier_is_retried_on_the_24gb_tier() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let token = app.demo_token().await;
    // both 4090s busy, so the first attempt lands on a 3080 Ti
    let hold = app.submit_ok(&admin, job("hold", 2, HOLD)).await["id"].as_i64().unwrap();
    let held = app.wait_state(&admin, hold, "RUNNING").await;
    assert_eq!(held["tier"], "rtx4090");
    let script = r#"echo "attempt $JOB_ATTEMPT on $JPU_TIER"
if [ "$JPU_TIER" = rtx3080ti ]; then echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1; fi
echo trained > "$JOB_OUTPUT_DIR/model.txt""#;
    let id = app.submit_ok(&token, job("big-model", 1, script)).await["id"].as_i64().unwrap();
    app.wait_job(&token, id, "attempt 2", |j| j["attempt"] == 2).await;
    release(&app, hold);
    let done = app.wait_state(&token, id, "COMPLETED").await;
    let tiers: Vec<&str> = done["attempts"].as_array().unwrap().iter().map(|a| a["tier"].as_str().unwrap()).collect();
    assert_eq!(tiers, ["rtx3080ti", "rtx4090"]);
    assert_eq!(done["attempts"][0]["reason"], "GPU_OOM");
    let log = read(&app.log_path(id));
    assert!(log.contains("attempt 1 on rtx3080ti") && log.contains("attempt 2 on rtx4090"), "{log}");
    assert_eq!(read(&app.output_dir(id).join("model.txt")).trim(), "trained");
    // each attempt's output is a file of its own beside the job's files
    let first = app.get(Some(&token), &format!("/v1/jobs/{id}/files/jpu-attempt-1.log")).await.text().await.unwrap();
    assert!(first.contains("attempt 1 on rtx3080ti") && first.contains("CUDA out of memory"), "{first}");
    assert!(!first.contains("attempt 2 on"), "only the first attempt: {first}");
    let second = app.get(Some(&token), &format!("/v1/jobs/{id}/files/jpu-attempt-2.log")).await.text().await.unwrap();
    assert!(second.starts_with("[jpu-share] attempt 2 of job") && second.contains("attempt 2 on rtx4090"), "{second}");
}

#[tokio::test]
async fn cancel_gives_the_job_its_grace_to_checkpoint_then_kills_what_ignores_it() {
    let app = TestApp::spawn_local().await;
    let token = app.demo_token().await;
    let polite = r#"trap 'echo "step 7" > "$JOB_OUTPUT_DIR/checkpoint"; exit 0' TERM
echo ready; sleep 300 & wait"#;
    let stubborn = r#"trap '' TERM; echo ready; sleep 300 & wait; sleep 300"#;
    let a = app.submit_ok(&token, job("polite", 1, polite)).await["id"].as_i64().unwrap();
    let b = app.submit_ok(&token, job("stubborn", 1, stubborn)).await["id"].as_i64().unwrap();
    for id in [a, b] {
        app.wait_state(&token, id, "RUNNING").await;
        wait_for("the job's trap", || read(&app.log_path(id)).contains("ready")).await;
    }
    let asked = std::time::Instant::now();
    for id in [a, b] {
        assert_eq!(app.cancel(&token, id).await.status(), 202);
    }
    let ended = app.wait_state(&token, a, "CANCELLED").await;
    assert_eq!(ended["end_reason"], "CANCELLED");
    assert_eq!(read(&app.output_dir(a).join("checkpoint")).trim(), "step 7");
    app.wait_state(&token, b, "CANCELLED").await;
    // SIGKILL only after the 2 s grace
    assert!(asked.elapsed() >= Duration::from_secs(2), "{:?}", asked.elapsed());
}

#[tokio::test]
async fn an_attempt_past_its_time_limit_is_stopped_and_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let wake = std::sync::Arc::new(tokio::sync::Notify::new());
    let executor = LocalExecutor::new(dir.path(), Duration::from_secs(1), "apptainer", wake.clone());
    let request =
        crate::helpers::one_gpu_attempt(&executor, "echo started; sleep 30", Duration::from_secs(1), 3_999_001);
    executor.start(request.clone()).await.unwrap();
    // starting the same attempt again must not run it twice
    executor.start(request).await.unwrap();
    let finished = crate::helpers::wait_finished(&executor, &wake).await;
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].end, EndSignal::TimeLimit);
    let log = read(&executor.layout().log(1));
    assert_eq!(log.matches("started\n").count(), 1, "{log}");
}

/// kill -9 of the server while one job runs and another ends while it is
/// down: after a restart nothing is lost, nothing started twice, and each
/// job is charged once.
#[tokio::test]
async fn kill_9_of_the_server_loses_nothing_and_starts_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let a = app.submit_ok(&token, job("ends-while-down", 1, HOLD)).await["id"].as_i64().unwrap();
    let b = app.submit_ok(&token, job("runs-across", 1, HOLD)).await["id"].as_i64().unwrap();
    for id in [a, b] {
        app.wait_state(&token, id, "RUNNING").await;
    }
    server.kill9().await;

    release(&app, a);
    wait_for("job a to end while the server is down", || read(&app.log_path(a)).contains("released")).await;
    let dir = app.stop().await;
    let server = ServerProcess::start(dir.path(), &[]).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let done_a = app.wait_state(&token, a, "COMPLETED").await;
    assert_eq!(app.job(&token, b).await.json::<Value>().await.unwrap()["state"], "RUNNING");
    release(&app, b);
    let done_b = app.wait_state(&token, b, "COMPLETED").await;
    for (id, done) in [(a, &done_a), (b, &done_b)] {
        assert_eq!(done["attempts"].as_array().unwrap().len(), 1, "job {id}: {done}");
        let log = read(&app.log_path(id));
        assert_eq!(log.matches(" of job ").count(), 1, "job {id} started twice:\n{log}");
        assert_eq!(charges(&app, id).await, 1, "job {id} charged once");
    }
    server.kill9().await;
}

/// The server dies in the middle of a dispatch, before or after the
/// executor call: after a restart the job runs exactly once.
#[tokio::test]
async fn a_crash_in_the_middle_of_a_dispatch_runs_the_job_exactly_once() {
    for failpoint in ["before-start", "before-confirm"] {
        let dir = tempfile::tempdir().unwrap();
        let server = ServerProcess::start(dir.path(), &[("JPU_FAILPOINT", failpoint)]).await;
        let app = TestApp::attach(server.base.clone(), dir);
        let token = app.demo_token().await;
        let id = app.submit_ok(&token, job("in-flight", 1, "echo ran")).await["id"].as_i64().unwrap();
        server.wait_exit().await; // aborted at the failpoint
        let dir = app.stop().await;
        let server = ServerProcess::start(dir.path(), &[]).await;
        let app = TestApp::attach(server.base.clone(), dir);
        let token = app.demo_token().await;
        let done = app.wait_state(&token, id, "COMPLETED").await;
        assert_eq!(done["attempts"].as_array().unwrap().len(), 1, "{failpoint}: {done}");
        let log = read(&app.log_path(id));
        assert_eq!(log.matches("ran\n").count(), 1, "{failpoint}: {log}");
        assert_eq!(charges(&app, id).await, 1, "{failpoint}");
        server.kill9().await;
    }
}

pub(crate) async fn charges(app: &TestApp, job: i64) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", app.db_path().display())).await.unwrap();
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM usage_charges WHERE job_id = ? AND kind = 'run'")
        .bind(job)
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    n
}

/// A cancel sends each process of the job one SIGTERM — the job's own and
/// one that left its process group — and the log ends with one plain line,
/// not the wrapper's "Killed" noise.
#[tokio::test]
async fn a_cancel_signals_each_process_once_and_the_log_says_so_plainly() {
    if !running_as_root() {
        return;
    }
    let app = TestApp::spawn_local().await;
    let token = app.demo_token().await;
    let script = r#"n=0; trap 'n=$((n+1)); echo "term $n"' TERM
setsid bash -c 'trap "echo child-term" TERM; echo child-ready; while :; do sleep 0.1; done' &
echo ready
while :; do sleep 0.1; done"#;
    let id = app.submit_ok(&token, job("stubborn", 1, script)).await["id"].as_i64().unwrap();
    app.wait_state(&token, id, "RUNNING").await;
    // both traps set (under load the child's came late, and a TERM before
    // it ended the child silently)
    wait_for("ready", || {
        let log = read(&app.log_path(id));
        log.contains("\nready") && log.contains("child-ready")
    })
    .await;
    assert_eq!(app.cancel(&token, id).await.status(), 202);
    app.wait_state(&token, id, "CANCELLED").await;
    let log = read(&app.log_path(id));
    assert_eq!(log.matches("term 1").count(), 1, "{log}");
    assert!(!log.contains("term 2"), "the job got SIGTERM twice:\n{log}");
    assert_eq!(log.matches("child-term").count(), 1, "{log}");
    assert!(!log.contains("Killed"), "{log}");
    assert!(log.ends_with("[jpu-share] attempt 1 was cancelled\n"), "{log}");
}
