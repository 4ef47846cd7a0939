//! #45 (5): several real `jpu-share serve` processes on one PostgreSQL
//! database and one output root, and what happens to the scheduler role
//! when one dies mid-cycle, is paused past its lease, or loses the
//! database for a while. Run in the suite's PostgreSQL pass only.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{client, TestApp};
use crate::process::ServerProcess;

/// A short lease, so the tests take seconds (the default is 15 s).
const HA: [(&str, &str); 3] =
    [("JPU__HA__LEASE_SECONDS", "4"), ("JPU__HA__RENEW_SECONDS", "1"), ("JPU__EXECUTOR__ALLOW_UNISOLATED", "true")];

async fn readyz(base: &str) -> (StatusCode, Value) {
    match client().get(format!("{base}/readyz")).timeout(Duration::from_secs(5)).send().await {
        Ok(resp) => {
            let status = resp.status();
            (status, resp.json().await.unwrap_or(Value::Null))
        }
        Err(e) => panic!("{base}/readyz did not answer: {e}"),
    }
}

/// Waits until `base` says `role`; how long that took.
async fn wait_role(base: &str, role: &str, within: Duration) -> Duration {
    let began = Instant::now();
    loop {
        let (status, body) = readyz(base).await;
        if status == StatusCode::OK && body["role"] == role {
            return began.elapsed();
        }
        assert!(began.elapsed() < within, "{base} never became {role}: {status} {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Each job ran exactly once: one attempt, and its output says so once.
async fn ran_once(app: &TestApp, token: &str, ids: &[i64]) {
    for id in ids {
        let done = app.wait_state(token, *id, "COMPLETED").await;
        assert_eq!(done["attempts"].as_array().map(Vec::len), Some(1), "one attempt: {done}");
        let log = app.client.get(app.url(&format!("/v1/jobs/{id}/logs"))).bearer_auth(token).send().await.unwrap();
        let log: Value = log.json().await.unwrap();
        let runs = log["data"].as_str().unwrap_or_default().matches("ran-once").count();
        assert_eq!(runs, 1, "job {id} ran once: {log}");
    }
}

fn job(name: &str, seconds: f64) -> Value {
    json!({"name": name, "command": format!("sleep {seconds}; echo ran-once"), "num_gpus": 1})
}

async fn submit_all(app: &TestApp, token: &str, prefix: &str, n: usize, seconds: f64) -> Vec<i64> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(app.submit_ok(token, job(&format!("{prefix}-{i}"), seconds)).await["id"].as_i64().unwrap());
    }
    ids
}

/// The instances of one test: one output root and one database, each
/// started with the short lease ([`HA`]) and `both` besides.
struct Site<'a> {
    dir: tempfile::TempDir,
    url: String,
    both: &'a [(&'a str, &'a str)],
    /// The database is the test's own on the suite's cluster: dropped at the end.
    drop_database: bool,
}

impl<'a> Site<'a> {
    /// A database of its own on the suite's PostgreSQL cluster (None on
    /// the SQLite pass: one instance there).
    fn on_suite_cluster(both: &'a [(&'a str, &'a str)]) -> Option<Self> {
        let Some(cluster) = crate::helpers::postgres_cluster() else {
            eprintln!("several instances need PostgreSQL; skipping");
            return None;
        };
        let dir = crate::helpers::shared_tempdir();
        let url = crate::helpers::postgres_database_for(&cluster, dir.path());
        Some(Self { dir, url, both, drop_database: true })
    }

    /// What `sql` answers on this site's database, as `psql` prints it.
    fn query(&self, sql: &str) -> String {
        let out = std::process::Command::new("psql").args(["-q", "-t", "-A", &self.url, "-c", sql]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    async fn start(&self, more: &[(&str, &str)]) -> ServerProcess {
        let mut env = HA.to_vec();
        env.push(("JPU__DATABASE__URL", self.url.as_str()));
        env.extend_from_slice(self.both);
        env.extend_from_slice(more);
        ServerProcess::start(self.dir.path(), &env).await
    }

    /// A first instance (with `first_only` besides) once it schedules, a
    /// second standing by, and a client of the second with the demo's token.
    async fn scheduler_and_standby(
        &self,
        first_only: &[(&str, &str)],
    ) -> (ServerProcess, ServerProcess, TestApp, String) {
        let first = self.start(first_only).await;
        wait_role(&first.base, "scheduler", Duration::from_secs(20)).await;
        let second = self.start(&[]).await;
        let app = TestApp::attach(second.base.clone(), tempfile::tempdir().unwrap());
        let token = app.demo_token().await;
        (first, second, app, token)
    }
}

impl Drop for Site<'_> {
    fn drop(&mut self) {
        if self.drop_database {
            crate::helpers::drop_postgres_database(&self.url);
        }
    }
}

/// 60 jobs waiting on the demo's 4 GPUs; the scheduler dies in the
/// middle of a dispatch (after the executor started the job, before the
/// start was confirmed: the `before-confirm` failpoint aborts the
/// process), the standby takes over; then that one is `kill -9`ed while
/// jobs run and a third takes over. Every job runs exactly once.
#[tokio::test]
async fn on_postgres_sixty_jobs_run_exactly_once_across_two_scheduler_deaths() {
    let Some(site) = Site::on_suite_cluster(&[]) else { return };
    let (first, second, app, token) = site.scheduler_and_standby(&[("JPU_FAILPOINT", "before-confirm")]).await;
    let ids = submit_all(&app, &token, "wave", 60, 0.3).await;
    // the first aborts at its first dispatch
    first.wait_exit().await;
    let took = wait_role(&second.base, "scheduler", Duration::from_secs(30)).await;
    eprintln!("the standby led {:.1} s after the abort", took.as_secs_f64());
    let third = site.start(&[]).await;
    // some jobs done, some running, most waiting: the second dies too
    app.wait_state(&token, ids[8], "COMPLETED").await;
    second.kill9().await;
    let app = TestApp::attach(third.base.clone(), tempfile::tempdir().unwrap());
    wait_role(&third.base, "scheduler", Duration::from_secs(30)).await;
    ran_once(&app, &token, &ids).await;
    drop(third);
}

/// A scheduler stopped (`SIGSTOP`) past its lease is fenced when it
/// wakes (`SIGCONT`): the standby took over meanwhile, the woken one
/// steps down to standby by itself, and no job is started or ended twice
/// — neither those that ran across the pause nor those sent after it.
#[tokio::test]
async fn on_postgres_a_scheduler_paused_past_its_lease_steps_down_when_it_wakes() {
    let Some(site) = Site::on_suite_cluster(&[]) else { return };
    let (first, second, app, token) = site.scheduler_and_standby(&[]).await;
    let before = submit_all(&app, &token, "before", 16, 1.0).await;
    app.wait_state(&token, before[0], "RUNNING").await;
    let pid = nix::unistd::Pid::from_raw(first.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let took = wait_role(&second.base, "scheduler", Duration::from_secs(30)).await;
    eprintln!("the standby led {:.1} s after the pause", took.as_secs_f64());
    // jobs go on under the new scheduler while the old one sleeps
    let during = submit_all(&app, &token, "during", 4, 0.2).await;
    app.wait_state(&token, during[3], "COMPLETED").await;
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    wait_role(&first.base, "standby", Duration::from_secs(10)).await;
    let (_, one) = readyz(&first.base).await;
    let (_, two) = readyz(&second.base).await;
    assert_eq!((one["epoch"].as_i64(), two["role"].as_str()), (two["epoch"].as_i64(), Some("scheduler")));
    let after = submit_all(&app, &token, "after", 8, 0.2).await;
    let on_first = TestApp::attach(first.base.clone(), tempfile::tempdir().unwrap());
    ran_once(&on_first, &token, &[before, during, after].concat()).await;
    // it stood by, as a standby does: it leads once the other is gone
    second.kill9().await;
    wait_role(&first.base, "scheduler", Duration::from_secs(30)).await;
    let last = submit_all(&on_first, &token, "last", 2, 0.1).await;
    ran_once(&on_first, &token, &last).await;
    drop(first);
}

/// A scheduler stopped in the middle of a write holds the one write lock
/// of the whole database (every write takes it first): PostgreSQL ends
/// that transaction once it sat idle for a lease, so the standby still
/// takes over and work goes on; the sleeper, woken, stands by. Before,
/// every other instance's writes waited for as long as it slept.
#[tokio::test]
async fn on_postgres_a_scheduler_paused_inside_a_write_does_not_stop_the_others() {
    let Some(site) = Site::on_suite_cluster(&[]) else { return };
    let named = format!("{}?application_name=jpu-first", site.url);
    let (first, second, app, token) = site.scheduler_and_standby(&[("JPU__DATABASE__URL", &named)]).await;
    let mut before = submit_all(&app, &token, "before", 16, 1.0).await;
    let first_holds_the_write_lock = || {
        let sql = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                   WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = 'jpu-first'";
        site.query(sql) != "0"
    };
    let pid = nix::unistd::Pid::from_raw(first.pid() as i32);
    let began = Instant::now();
    let mut topped_up = Instant::now();
    loop {
        // the scheduler writes only while it starts and ends jobs: a
        // loaded machine may poll past the first batch without a catch
        if topped_up.elapsed() > Duration::from_secs(4) {
            let n = before.len();
            before.extend(submit_all(&app, &token, &format!("more-{n}"), 4, 1.0).await);
            topped_up = Instant::now();
        }
        if first_holds_the_write_lock() {
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
            if first_holds_the_write_lock() {
                break;
            }
            // it committed in between: again
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
        }
        assert!(began.elapsed() < Duration::from_secs(60), "never caught the scheduler inside a write");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let took = wait_role(&second.base, "scheduler", Duration::from_secs(30)).await;
    eprintln!("the standby led {:.1} s after the pause inside a write", took.as_secs_f64());
    assert!(!first_holds_the_write_lock(), "the sleeper's write lock went with its transaction");
    let during = submit_all(&app, &token, "during", 2, 0.2).await;
    app.wait_state(&token, during[1], "COMPLETED").await;
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    wait_role(&first.base, "standby", Duration::from_secs(10)).await;
    ran_once(&app, &token, &[before, during].concat()).await;
    drop(first);
}

/// A PostgreSQL cluster of this test's own (the suite's is shared), run
/// by `.ci/postgres-cluster` on a free port: it can be stopped and
/// started again under two servers.
struct OwnCluster {
    base: String,
    port: u16,
    url: String,
}

impl OwnCluster {
    fn script() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/postgres-cluster")
    }

    fn run(&self, what: &str) -> String {
        let out = std::process::Command::new(Self::script())
            .arg(what)
            .env("JPU_PG_BASE", &self.base)
            .env("JPU_PG_PORT", self.port.to_string())
            .output()
            .expect("the cluster script runs");
        assert!(out.status.success(), "postgres-cluster {what}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        // under /tmp: the postgres user must reach it
        let base = format!("/tmp/jpu-pg-own-{}-{port}", std::process::id());
        let mut cluster = Self { base, port, url: String::new() };
        let said = cluster.run("start");
        cluster.url = said.trim().trim_start_matches("export JPU_TEST_POSTGRES=").to_string();
        cluster
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script())
            .arg("stop")
            .env("JPU_PG_BASE", &self.base)
            .env("JPU_PG_PORT", self.port.to_string())
            .output();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The database stops under two servers: both keep answering `/healthz`
/// (degraded, naming the database) while `/readyz` says 503; when it is
/// back, both are ready again by themselves, one schedules, and a job
/// sent before the stop and one sent after both run.
#[tokio::test]
async fn on_postgres_both_instances_ride_out_a_database_restart() {
    if crate::helpers::postgres_cluster().is_none() {
        eprintln!("needs PostgreSQL installed (the suite's PostgreSQL pass); skipping");
        return;
    }
    let cluster = OwnCluster::start();
    // the cluster's own database: the cluster goes with the test
    let site =
        Site { dir: crate::helpers::shared_tempdir(), url: cluster.url.clone(), both: &[], drop_database: false };
    let (first, second, app, token) = site.scheduler_and_standby(&[]).await;
    let first_job = submit_all(&app, &token, "before", 1, 0.1).await;
    ran_once(&app, &token, &first_job).await;
    // a job waits behind a stopped database
    let held = app.submit_ok(&token, json!({"name": "held", "command": "sleep 60", "num_gpus": 1})).await;
    let held = held["id"].as_i64().unwrap();
    app.wait_state(&token, held, "RUNNING").await;
    let queued = submit_all(&app, &token, "queued", 1, 0.1).await;

    cluster.run("stop");
    for base in [&first.base, &second.base] {
        let began = Instant::now();
        loop {
            let (status, _) = readyz(base).await;
            if status == StatusCode::SERVICE_UNAVAILABLE {
                break;
            }
            assert!(began.elapsed() < Duration::from_secs(15), "{base}/readyz still {status}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let health = client().get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), StatusCode::OK, "liveness stays");
        let body: Value = health.json().await.unwrap();
        assert_eq!((body["status"].as_str(), body["database"].as_str()), (Some("degraded"), Some("unreachable")));
    }
    // longer than the lease: whoever held it stopped dispatching
    tokio::time::sleep(Duration::from_secs(6)).await;
    cluster.run("resume");
    let mut roles = Vec::new();
    for base in [&first.base, &second.base] {
        let began = Instant::now();
        loop {
            let (status, body) = readyz(base).await;
            if status == StatusCode::OK {
                roles.push(body["role"].as_str().unwrap_or_default().to_string());
                break;
            }
            assert!(began.elapsed() < Duration::from_secs(30), "{base} never ready again: {status}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // one of them schedules again, by itself
    let began = Instant::now();
    loop {
        let a = readyz(&first.base).await.1;
        let b = readyz(&second.base).await.1;
        let leaders = [&a, &b].iter().filter(|r| r["role"] == "scheduler").count();
        if leaders == 1 {
            break;
        }
        assert!(
            leaders == 0 && began.elapsed() < Duration::from_secs(30),
            "one scheduler: {a} {b} (first seen {roles:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(app.cancel(&token, held).await.status().is_success());
    let after = submit_all(&app, &token, "after", 2, 0.1).await;
    ran_once(&app, &token, &[queued, after].concat()).await;
    let held = app.wait_state(&token, held, "CANCELLED").await;
    assert_eq!(held["attempts"].as_array().map(Vec::len), Some(1), "{held}");
    drop(first);
    drop(second);
}

/// A submit to a standby wakes the scheduler on the other instance at
/// once (LISTEN/NOTIFY): with a 5 s cycle, each job sent to the standby
/// runs well within a second, not at the scheduler's next timed cycle.
#[tokio::test]
async fn on_postgres_a_submit_to_a_standby_runs_at_once() {
    let Some(site) = Site::on_suite_cluster(&[("JPU__SCHEDULER__CYCLE_MS", "5000")]) else { return };
    let (first, second, app, token) = site.scheduler_and_standby(&[]).await;
    let mut slowest = Duration::ZERO;
    for i in 0..5 {
        let sent = Instant::now();
        let id = app.submit_ok(&token, job(&format!("woken-{i}"), 0.0)).await["id"].as_i64().unwrap();
        app.wait_job(&token, id, "a start", |j| j["started_at"].is_string()).await;
        slowest = slowest.max(sent.elapsed());
        app.wait_state(&token, id, "COMPLETED").await;
    }
    assert!(slowest < Duration::from_secs(2), "submit → RUNNING through a standby took {slowest:?} (the cycle: 5 s)");
    drop(first);
    drop(second);
}

/// Two instances started at the same moment on an empty database: one
/// migrates and seeds it, the other finds it done (api.md), and both
/// serve the same accounts.
#[tokio::test]
async fn on_postgres_two_instances_started_at_once_seed_the_database_once() {
    let Some(site) = Site::on_suite_cluster(&[]) else { return };
    let (one, two) = tokio::join!(site.start(&[]), site.start(&[]));
    assert_eq!(
        (site.query("SELECT COUNT(*) FROM users").as_str(), site.query("SELECT COUNT(*) FROM nodes").as_str()),
        ("2", "2")
    );
    for base in [&one.base, &two.base] {
        let app = TestApp::attach(base.clone(), tempfile::tempdir().unwrap());
        let token = app.demo_token().await;
        assert_eq!(app.me(Some(&token)).await.status(), StatusCode::OK);
    }
    drop(one);
    drop(two);
}
