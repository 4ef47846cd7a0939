//! `TestApp`: a real server on a random port over a temp database, with
//! one helper per endpoint.

use std::path::{Path, PathBuf};

use jpu_share::config::Settings;
use jpu_share::executor::timed::TimedExecutor;
use jpu_share::startup::{Application, BootstrapPasswords};
use reqwest::{Client, Response, StatusCode};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::sync::oneshot;

pub const ADMIN_PASSWORD: &str = "admin-test-password";
pub const DEMO_PASSWORD: &str = "demo-test-password";

pub struct TestApp {
    pub base: String,
    pub client: Client,
    pub dir: TempDir,
    stop: Option<oneshot::Sender<()>>,
    /// the server's end, sent by its thread when it has stopped
    server: Option<oneshot::Receiver<std::io::Result<()>>>,
    pub executor: Option<TimedExecutor>,
    /// Where a local executor runs this server's jobs: whatever of them
    /// still runs when the test ends is killed (jobs outlive their server
    /// by design; a test's must not outlive the test, or they load the
    /// machine under every later test and benchmark).
    jobs_root: Option<PathBuf>,
    /// The server's PostgreSQL database (dropped with the test), if any.
    database: Option<String>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(root) = &self.jobs_root {
            jpu_share::executor::local::LocalExecutor::kill_every_attempt(root);
        }
        // homes and lab shares go with the test (not when it only stopped
        // the server to start another on the same data)
        if self.stop.is_some() {
            let storage = storage_root_for(self.dir.path());
            if storage.starts_with(SHARED_BASE) {
                let _ = std::fs::remove_dir_all(storage);
            }
            if let Some(url) = &self.database {
                drop_postgres_database(url);
            }
        }
    }
}

const SHARED_BASE: &str = "/var/lib/jpu-share-tests";

/// Where a test server's homes and lab shares live: where jobs running as
/// other uids reach them by path (as root: under [`SHARED_BASE`]; a temp
/// dir is closed to them, and jobs get a private /tmp), named after the
/// server's temp dir so a restarted server finds them again.
pub fn storage_root_for(dir: &Path) -> PathBuf {
    let base = Path::new(SHARED_BASE);
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    if nix::unistd::geteuid().is_root() && std::fs::create_dir_all(base).is_ok() {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755));
        return base.join(format!("storage{name}"));
    }
    dir.join("storage")
}

enum Exec {
    /// no scheduler loop: jobs stay queued
    None,
    Timed,
    /// what the settings say (the local executor)
    Configured,
}

/// The PostgreSQL cluster the suite runs against instead of SQLite files
/// (`JPU_TEST_DATABASE=postgres`, with `JPU_TEST_POSTGRES` the cluster's
/// URL: `.ci/with-postgres`), or None.
pub fn postgres_cluster() -> Option<String> {
    if std::env::var("JPU_TEST_DATABASE").as_deref() != Ok("postgres") {
        return None;
    }
    Some(
        std::env::var("JPU_TEST_POSTGRES")
            .expect("JPU_TEST_DATABASE=postgres needs JPU_TEST_POSTGRES (.ci/with-postgres)"),
    )
}

/// The database of the test server in `dir` on the PostgreSQL cluster:
/// one per server's folder (a server started again on the same folder
/// finds its data, as with a SQLite file), made when missing.
pub fn postgres_database_for(cluster: &str, dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let name = format!("t_{name}");
    // "already exists" is fine: a restart on the same folder
    let _ = std::process::Command::new("psql")
        .args(["-q", cluster, "-c", &format!("CREATE DATABASE {name}")])
        .stderr(std::process::Stdio::null())
        .status();
    format!("{}/{name}", cluster.rsplit_once('/').map_or(cluster, |(base, _)| base))
}

/// Drops the test server's database (PostgreSQL runs only).
pub fn drop_postgres_database(url: &str) {
    let Some(cluster) = postgres_cluster() else { return };
    let Some((_, name)) = url.rsplit_once('/') else { return };
    let _ = std::process::Command::new("psql")
        .args(["-q", &cluster, "-c", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")])
        .stderr(std::process::Stdio::null())
        .status();
}

/// Settings for a test server whose files live in `dir`.
pub fn test_settings(dir: &Path) -> Settings {
    let mut s = Settings::default();
    s.server.bind = "127.0.0.1:0".into();
    s.database.url = match postgres_cluster() {
        Some(cluster) => postgres_database_for(&cluster, dir),
        None => format!("sqlite://{}", dir.join("jpu.db").display()),
    };
    s.executor.output_root = dir.join("jobs");
    s.storage.root = storage_root_for(dir);
    // the tests' webhook receivers listen on loopback, which a default
    // server refuses as a target
    s.notify.webhook_allow = vec!["127.0.0.1".into()];
    s
}

/// A temp dir jobs can reach by path. Jobs get private /tmp, /var/tmp,
/// /dev/shm and /run/lock, so a directory shared with a job lives
/// elsewhere (as root; others cannot contain jobs anyway).
pub fn shared_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let base = Path::new(SHARED_BASE);
    if nix::unistd::geteuid().is_root() && std::fs::create_dir_all(base).is_ok() {
        let _ = std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o755));
        if let Ok(dir) = tempfile::tempdir_in(base) {
            return dir;
        }
    }
    tempfile::tempdir().expect("temp dir")
}

pub fn client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .cookie_store(true)
        // a request that hangs fails its test instead of the whole run
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("client builds")
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        let settings = test_settings(dir.path());
        Self::spawn_with(dir, settings).await
    }

    pub async fn spawn_with(dir: TempDir, settings: Settings) -> TestApp {
        Self::spawn_inner(dir, settings, Exec::None).await
    }

    /// A server driving the test Slurm cluster (`.ci/slurm-cluster start`,
    /// found through `SLURM_CONF`), or `None` when there is none and the
    /// run does not require one (`JPU_TEST_SLURM=1` makes it required).
    pub async fn spawn_slurm() -> Option<TestApp> {
        Self::spawn_slurm_with(|_| {}).await
    }

    pub async fn spawn_slurm_with(change: impl FnOnce(&mut Settings)) -> Option<TestApp> {
        if std::env::var_os("SLURM_CONF").is_none() {
            assert!(
                std::env::var_os("JPU_TEST_SLURM").is_none(),
                "JPU_TEST_SLURM is set but SLURM_CONF is not: start the cluster with .ci/slurm-cluster start"
            );
            eprintln!("no SLURM_CONF: skipping a Slurm test (make test runs them)");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let mut settings = test_settings(dir.path());
        settings.scheduler.cycle_ms = 200;
        settings.executor.kind = jpu_share::config::ExecutorKind::Slurm;
        change(&mut settings);
        let app = Self::spawn_inner(dir, settings, Exec::Configured).await;
        app.give_slurm_uids().await;
        Some(app)
    }

    /// Slurm runs jobs only as their user's configured uid: demo and admin
    /// become the host accounts `.ci/slurm-cluster` makes (3901, 3902).
    pub async fn give_slurm_uids(&self) {
        let admin = self.admin_token().await;
        for (user, uid) in [("demo", 3901), ("admin", 3902)] {
            let resp = self
                .client
                .patch(self.url(&format!("/v1/admin/users/{user}")))
                .bearer_auth(&admin)
                .json(&json!({"unix_uid": uid}))
                .send()
                .await
                .expect("request");
            assert_eq!(resp.status(), StatusCode::OK, "set {user}'s uid");
        }
    }

    /// A server with the real local executor (real processes), a 200 ms
    /// cycle and a 2 s cancel grace.
    pub async fn spawn_local() -> TestApp {
        Self::spawn_local_with(|_| {}).await
    }

    /// [`spawn_local`](Self::spawn_local) with changed settings.
    pub async fn spawn_local_with(change: impl FnOnce(&mut Settings)) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut settings = test_settings(dir.path());
        settings.scheduler.cycle_ms = 200;
        settings.cancel.grace_seconds = 2;
        change(&mut settings);
        Self::spawn_inner(dir, settings, Exec::Configured).await
    }

    /// A server whose scheduler loop drives the timed test executor
    /// (attempts "run" for `JPU_SIM_SECONDS` from their env).
    pub async fn spawn_scheduling() -> TestApp {
        Self::spawn_scheduling_with(|_| {}).await
    }

    /// [`spawn_scheduling`](Self::spawn_scheduling) with changed settings.
    pub async fn spawn_scheduling_with(change: impl FnOnce(&mut Settings)) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut settings = test_settings(dir.path());
        settings.scheduler.cycle_ms = 200;
        change(&mut settings);
        Self::spawn_inner(dir, settings, Exec::Timed).await
    }

    /// A scheduling server (as [`spawn_scheduling`](Self::spawn_scheduling))
    /// on the files of a stopped one.
    pub async fn spawn_scheduling_in(dir: TempDir) -> TestApp {
        let mut settings = test_settings(dir.path());
        settings.scheduler.cycle_ms = 200;
        Self::spawn_inner(dir, settings, Exec::Timed).await
    }

    /// A second scheduling server on the database and output folder of
    /// a running one (`#45`: two instances on one database).
    pub async fn spawn_scheduling_beside(other: &TestApp) -> TestApp {
        let mut settings = test_settings(other.dir.path());
        settings.scheduler.cycle_ms = 200;
        Self::spawn_inner(tempfile::tempdir().expect("temp dir"), settings, Exec::Timed).await
    }

    async fn spawn_inner(dir: TempDir, settings: Settings, exec: Exec) -> TestApp {
        let database = jpu_share::db::is_postgres_url(&settings.database.url).then(|| settings.database.url.clone());
        // server logs go to the test's captured output (shown on failure)
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
            .with_test_writer()
            .try_init();
        let bootstrap = BootstrapPasswords { admin: Some(ADMIN_PASSWORD.into()), demo: Some(DEMO_PASSWORD.into()) };
        // The server gets a runtime of its own, as the binary has (several
        // worker threads), instead of sharing the test's one thread: a
        // console page once stopped streaming for a minute under a full
        // run while it shared that thread with the test awaiting it.
        let (ready, started) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let (ended, server) = oneshot::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("server runtime");
            let result = runtime.block_on(async move {
                let mut app = Application::build(settings, bootstrap).await.expect("server builds");
                let executor = matches!(exec, Exec::Timed).then(|| TimedExecutor::new(app.state().wake.clone()));
                if !matches!(exec, Exec::Configured) {
                    app.set_executor(
                        executor
                            .clone()
                            .map(|e| std::sync::Arc::new(e) as std::sync::Arc<dyn jpu_share::executor::Executor>),
                    );
                }
                let addr = app.local_addr().expect("bound");
                let jobs_root =
                    matches!(exec, Exec::Configured).then(|| app.state().settings.executor.output_root.clone());
                let _ = ready.send((addr, executor, jobs_root));
                app.run_until(async move {
                    let _ = stopped.await;
                })
                .await
            });
            let _ = ended.send(result);
        });
        let (addr, executor, jobs_root) = started.await.expect("server builds");
        TestApp {
            base: format!("http://{addr}"),
            client: client(),
            dir,
            stop: Some(stop),
            server: Some(server),
            executor,
            jobs_root,
            database,
        }
    }

    /// Talks to a server running elsewhere (e.g. a real `jpu-share`
    /// process) whose files are in `dir`.
    pub fn attach(base: String, dir: TempDir) -> TestApp {
        let database = postgres_cluster().map(|cluster| postgres_database_for(&cluster, dir.path()));
        TestApp { base, client: client(), dir, stop: None, server: None, executor: None, jobs_root: None, database }
    }

    /// Stops the server gracefully and returns its directory (database
    /// included) so a test can start another server on the same data.
    pub async fn stop(mut self) -> TempDir {
        // its jobs go on: the test starts the next server on them
        self.jobs_root = None;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.expect("server thread").expect("server ran");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        std::mem::replace(&mut self.dir, dir)
    }

    /// The job's log file as the executor writes it.
    pub fn log_path(&self, id: i64) -> PathBuf {
        jpu_share::executor::layout::Layout::new(&self.dir.path().join("jobs")).log(id)
    }

    pub fn output_root(&self) -> PathBuf {
        self.dir.path().join("jobs")
    }

    pub fn output_dir(&self, id: i64) -> PathBuf {
        jpu_share::executor::layout::Layout::new(&self.dir.path().join("jobs")).output_dir(id)
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("jpu.db")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    // ---- /v1/auth

    pub async fn create_token(&self, username: &str, password: &str) -> Response {
        self.client
            .post(self.url("/v1/auth/token"))
            .json(&json!({"username": username, "password": password}))
            .send()
            .await
            .expect("request")
    }

    /// A token for `username`, asserting the sign-in works.
    pub async fn token_for(&self, username: &str, password: &str) -> String {
        let resp = self.create_token(username, password).await;
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.expect("json");
        body["token"].as_str().expect("token").to_string()
    }

    pub async fn admin_token(&self) -> String {
        self.token_for("admin", ADMIN_PASSWORD).await
    }

    pub async fn demo_token(&self) -> String {
        self.token_for("demo", DEMO_PASSWORD).await
    }

    pub async fn revoke_token(&self, token: &str) -> Response {
        self.client.delete(self.url("/v1/auth/token")).bearer_auth(token).send().await.expect("request")
    }

    pub async fn me(&self, token: Option<&str>) -> Response {
        let req = self.client.get(self.url("/v1/me"));
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        req.send().await.expect("request")
    }

    pub async fn audit(&self, token: &str) -> Response {
        self.client.get(self.url("/v1/admin/audit")).bearer_auth(token).send().await.expect("request")
    }

    pub async fn maintenance_status(&self) -> Response {
        self.client.get(self.url("/v1/maintenance/status")).send().await.expect("request")
    }

    // ---- /v1/jobs

    pub async fn submit(&self, token: &str, body: Value) -> Response {
        self.client.post(self.url("/v1/jobs")).bearer_auth(token).json(&body).send().await.expect("request")
    }

    /// Runs a one-GPU job `script` as `token`'s user to completion;
    /// returns its id.
    pub async fn run_job(&self, token: &str, name: &str, script: &str) -> i64 {
        let id = self.submit_ok(token, json!({"name": name, "command": script, "num_gpus": 1})).await["id"]
            .as_i64()
            .unwrap();
        self.wait_state(token, id, "COMPLETED").await;
        id
    }

    /// Submits and asserts 201; returns the job object.
    pub async fn submit_ok(&self, token: &str, body: Value) -> Value {
        let resp = self.submit(token, body).await;
        let status = resp.status();
        let body: Value = resp.json().await.expect("job json");
        // the refusal's code and message say which rule refused it
        assert_eq!(status, StatusCode::CREATED, "submit: {body}");
        body
    }

    pub async fn job(&self, token: &str, id: i64) -> Response {
        self.client.get(self.url(&format!("/v1/jobs/{id}"))).bearer_auth(token).send().await.expect("request")
    }

    pub async fn cancel(&self, token: &str, id: i64) -> Response {
        self.client.post(self.url(&format!("/v1/jobs/{id}/cancel"))).bearer_auth(token).send().await.expect("request")
    }

    /// Polls the job until `done` holds for it (10 s at most).
    pub async fn wait_job(&self, token: &str, id: i64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let job: Value = self.job(token, id).await.json().await.expect("job json");
            if done(&job) {
                return job;
            }
            assert!(std::time::Instant::now() < deadline, "job {id} never reached {what}: {job}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub async fn wait_state(&self, token: &str, id: i64, state: &str) -> Value {
        self.wait_job(token, id, state, |j| j["state"] == state).await
    }

    /// Polls `cond` until it holds (30 s at most).
    pub async fn wait_until<F, Fut>(&self, what: &str, mut cond: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !cond().await {
            assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Runs SQL on the test database (for states no endpoint sets yet).
    pub async fn sql(&self, statement: &str) {
        match &self.database {
            Some(url) => {
                let pool = sqlx::PgPool::connect(url).await.unwrap();
                sqlx::raw_sql(statement).execute(&pool).await.unwrap();
                pool.close().await;
            }
            None => {
                let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", self.db_path().display())).await.unwrap();
                sqlx::query(statement).execute(&pool).await.unwrap();
                pool.close().await;
            }
        }
        jpu_share::db::note_commit();
    }

    /// One number read from the test database (e.g. a ledger sum).
    pub async fn sql_number(&self, query: &str) -> f64 {
        match &self.database {
            Some(url) => {
                let pool = sqlx::PgPool::connect(url).await.unwrap();
                let value: f64 = sqlx::query_scalar(&format!("SELECT CAST(({query}) AS DOUBLE PRECISION)"))
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                pool.close().await;
                value
            }
            None => {
                let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", self.db_path().display())).await.unwrap();
                let value: f64 =
                    sqlx::query_scalar(&format!("SELECT CAST(({query}) AS REAL)")).fetch_one(&pool).await.unwrap();
                pool.close().await;
                value
            }
        }
    }

    /// The test server's database, as the server's own code takes it.
    pub async fn pool(&self) -> jpu_share::db::Pool {
        match &self.database {
            Some(url) => jpu_share::db::Pool::Postgres(sqlx::PgPool::connect(url).await.unwrap()),
            None => jpu_share::db::Pool::Sqlite(
                sqlx::SqlitePool::connect(&format!("sqlite://{}", self.db_path().display())).await.unwrap(),
            ),
        }
    }

    /// Whether this run is on PostgreSQL (a test of SQLite's own file
    /// skips then).
    pub fn on_postgres(&self) -> bool {
        self.database.is_some()
    }

    /// The server's PostgreSQL URL (None on SQLite).
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// `GET` any /v1 path as `token` (None = anonymous).
    pub async fn get(&self, token: Option<&str>, path: &str) -> Response {
        let req = self.client.get(self.url(path));
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        req.send().await.expect("request")
    }

    pub async fn post(&self, token: Option<&str>, path: &str, body: Value) -> Response {
        let req = self.client.post(self.url(path)).json(&body);
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        req.send().await.expect("request")
    }

    pub async fn delete(&self, token: &str, path: &str) -> Response {
        self.client.delete(self.url(path)).bearer_auth(token).send().await.expect("request")
    }

    pub async fn patch(&self, token: &str, path: &str, body: Value) -> Response {
        self.client.patch(self.url(path)).bearer_auth(token).json(&body).send().await.expect("request")
    }

    /// Gives every demo tier 1 GB of RAM per GPU (for jobs that must run
    /// out of memory quickly).
    pub async fn small_memory(&self, admin: &str) {
        for tier in ["rtx4090", "rtx3080ti"] {
            let resp = self.patch(admin, &format!("/v1/admin/tiers/{tier}"), json!({"mem_gb_per_gpu": 1})).await;
            assert_eq!(resp.status(), StatusCode::OK, "{tier}");
        }
    }

    /// Creates a lab (if needed) and a researcher in it; returns a token.
    pub async fn researcher(&self, admin: &str, username: &str, lab: &str) -> String {
        let resp = self.post(Some(admin), "/v1/admin/labs", json!({"name": lab})).await;
        assert!(resp.status() == StatusCode::CREATED || resp.status() == StatusCode::CONFLICT, "create lab");
        let password = format!("{username}-password");
        let resp = self
            .post(
                Some(admin),
                "/v1/admin/users",
                json!({"username": username, "password": password, "lab": lab, "role": "researcher"}),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::CREATED, "create user");
        self.token_for(username, &password).await
    }

    // ---- operations

    pub async fn healthz(&self) -> Response {
        self.client.get(self.url("/healthz")).send().await.expect("request")
    }

    /// `/metrics` as an admin (anonymous callers are refused).
    pub async fn metrics(&self) -> String {
        let admin = self.admin_token().await;
        let resp = self.client.get(self.url("/metrics")).bearer_auth(admin).send().await.expect("request");
        assert_eq!(resp.status(), StatusCode::OK, "metrics");
        resp.text().await.expect("text")
    }

    // ---- console

    pub async fn page(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.expect("request")
    }

    pub async fn console_login(&self, username: &str, password: &str) -> Response {
        self.console_login_as(&self.client, username, password).await
    }

    /// Signs in through the console's form with another browser.
    pub async fn console_login_as(&self, browser: &Client, username: &str, password: &str) -> Response {
        browser
            .post(self.url("/login"))
            .header("origin", &self.base)
            .form(&[("username", username), ("password", password)])
            .send()
            .await
            .expect("request")
    }

    pub async fn console_logout(&self) -> Response {
        self.client.post(self.url("/logout")).header("origin", &self.base).send().await.expect("request")
    }
}

/// Asserts an api.md error body with `code` and returns its message.
pub async fn assert_error(resp: Response, status: StatusCode, code: &str) -> String {
    assert_eq!(resp.status(), status, "status");
    let body: Value = resp.json().await.expect("error body is JSON");
    assert_eq!(body["error"]["code"], code, "code in {body}");
    let message = body["error"]["message"].as_str().expect("message").to_string();
    assert!(!message.is_empty());
    message
}

/// Attempt 1 of job 1 on one rtx4090 GPU, run by `executor` directly (no
/// server): `command` under `time_limit`, as `uid`.
pub fn one_gpu_attempt(
    executor: &jpu_share::executor::local::LocalExecutor,
    command: &str,
    time_limit: std::time::Duration,
    uid: u32,
) -> jpu_share::executor::StartRequest {
    let output_dir = executor.layout().output_dir(1);
    jpu_share::executor::StartRequest {
        job: 1,
        attempt: 1,
        node: "node-4090".into(),
        tier: "rtx4090".into(),
        partition: "rtx4090".into(),
        gpus: vec![0],
        command: command.into(),
        env: vec![("JOB_OUTPUT_DIR".into(), output_dir.display().to_string())],
        time_limit,
        cpus: 1,
        mem_gb: 1,
        unix_uid: Some(uid),
        uid_configured: false,
        unix_gid: None,
        groups: Vec::new(),
        output_dir,
        image: None,
        places: None,
        owner: String::new(),
    }
}

/// The attempts `executor` reports ended, once there are some (it wakes
/// `wake` when one ends).
pub async fn wait_finished(
    executor: &jpu_share::executor::local::LocalExecutor,
    wake: &tokio::sync::Notify,
) -> Vec<jpu_share::executor::Finished> {
    use jpu_share::executor::Executor;
    loop {
        let finished = executor.take_finished().await.unwrap();
        if !finished.is_empty() {
            return finished;
        }
        wake.notified().await;
    }
}

/// `bytes` decoded from the response's `Content-Encoding` (none, gzip or
/// brotli: what the site's compression layer sends a browser).
pub fn decoded(encoding: Option<&str>, bytes: &[u8]) -> String {
    use std::io::Read;
    let mut text = String::new();
    match encoding {
        None | Some("identity") => text = String::from_utf8(bytes.to_vec()).expect("UTF-8"),
        Some("gzip") => _ = flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).expect("gzip"),
        Some("br") => _ = brotli::Decompressor::new(bytes, 4096).read_to_string(&mut text).expect("brotli"),
        Some(other) => panic!("an encoding the request did not ask for: {other}"),
    }
    text
}
