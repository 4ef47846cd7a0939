//! Health, metrics, maintenance status, config layering and restarts.

use crate::helpers::*;
use jpu_share::config::Settings;
use reqwest::StatusCode;
use serde_json::{json, Value};

#[tokio::test]
async fn maintenance_status_is_anonymous_and_normal_on_a_new_install() {
    let app = TestApp::spawn().await;
    let resp = app.maintenance_status().await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["phase"], "NORMAL");
    assert!(body["since"].as_str().unwrap().ends_with('Z'));
    assert!(body.get("message").is_some());
}

#[tokio::test]
async fn healthz_reports_the_database() {
    let app = TestApp::spawn().await;
    let resp = app.healthz().await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["database"], "ok");
    assert!(body.get("oidc").is_none(), "no university sign-in here: {body}");
}

/// `/readyz` once the server's loop has taken the lease (just after it
/// listens), or its last answer after 10 s.
async fn scheduling(app: &TestApp) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let now: serde_json::Value = app.client.get(app.url("/readyz")).send().await.unwrap().json().await.unwrap();
        if now["role"] == "scheduler" || std::time::Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// #45 (4), on SQLite: `/readyz` (anonymous) names this instance's role
/// and the lease's epoch; the one instance schedules, and each start
/// takes the lease anew, moving the epoch on; `/metrics` says both.
#[tokio::test]
async fn readyz_names_the_scheduler_and_each_start_moves_the_epoch_on() {
    // a server with no executor runs no scheduler: a standby
    let idle = TestApp::spawn().await;
    let standby: serde_json::Value = idle.client.get(idle.url("/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(standby["role"], "standby", "{standby}");
    let app = TestApp::spawn_scheduling().await;
    let first = scheduling(&app).await;
    assert_eq!(first["role"], "scheduler", "{first}");
    let epoch = first["epoch"].as_i64().expect("an integer epoch");
    assert!(epoch >= 1, "{first}");
    let text = app.metrics().await;
    for name in ["jpu_scheduler_leader ", "jpu_scheduler_epoch "] {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name} in:\n{text}");
    }
    let dir = app.stop().await;
    let app = TestApp::spawn_scheduling_in(dir).await;
    let second = scheduling(&app).await;
    assert_eq!((second["role"].as_str(), second["epoch"].as_i64()), (Some("scheduler"), Some(epoch + 1)), "{second}");
}

/// #45 (3), fencing: a second instance that takes the lease on the same
/// database fences the first, whose loop stops writing at once; the
/// first keeps serving the API, and what it is sent is scheduled by the
/// new holder, never by both.
#[tokio::test]
async fn an_instance_that_lost_the_lease_never_schedules_again() {
    let first = TestApp::spawn_scheduling().await;
    let token = first.demo_token().await;
    let before = first.submit_ok(&token, serde_json::json!({"name": "a", "command": "x", "num_gpus": 1})).await;
    first.wait_state(&token, before["id"].as_i64().unwrap(), "RUNNING").await;
    let second = TestApp::spawn_scheduling_beside(&first).await;
    let ready = |app: &TestApp| {
        let req = app.client.get(app.url("/readyz"));
        async move { req.send().await.unwrap().json::<serde_json::Value>().await.unwrap() }
    };
    // SQLite: the lease is taken as the second's loop starts, just after
    // it listens. PostgreSQL: the second stands by while the first renews
    // (the takeover is `on_postgres_a_standby_takes_over_…`)
    let (now_scheduling, standing_by) = if first.on_postgres() { (&first, &second) } else { (&second, &first) };
    let two = scheduling(now_scheduling).await;
    let one = ready(standing_by).await;
    assert_eq!((one["role"].as_str(), two["role"].as_str()), (Some("standby"), Some("scheduler")), "{one} {two}");
    assert_eq!(one["epoch"], two["epoch"], "one epoch, the same on both");
    // sent to the first, started by the scheduler alone
    let after = first.submit_ok(&token, serde_json::json!({"name": "b", "command": "x", "num_gpus": 1})).await;
    let id = after["id"].as_i64().unwrap();
    first.wait_state(&token, id, "RUNNING").await;
    let started_by = |app: &TestApp| app.executor.as_ref().unwrap().started().iter().filter(|r| r.job == id).count();
    assert_eq!((started_by(standing_by), started_by(now_scheduling)), (0, 1));
}

/// #44 (7): an OpenID provider that does not answer shows on `/healthz`
/// (degraded, still 200: passwords and tokens still work), not only at
/// the next sign-in.
#[tokio::test]
async fn healthz_names_an_unreachable_openid_provider() {
    // a port nothing listens on
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.server.public_url = "http://127.0.0.1:8080".into();
    settings.auth.oidc.issuer = format!("http://{closed}/realms/campus");
    settings.auth.oidc.client_id = "jpu-share".into();
    settings.auth.oidc.lab_group = "^gpu-lab-(.+)$".into();
    let app = TestApp::spawn_with(dir, settings).await;
    let resp = app.healthz().await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["oidc"]["state"], "unavailable", "{body}");
    assert!(body["oidc"]["message"].as_str().unwrap_or_default().contains("discovery"), "{body}");
}

#[tokio::test]
async fn metrics_count_requests_by_route_in_prometheus_format() {
    let app = TestApp::spawn().await;
    app.healthz().await;
    app.me(None).await;
    let text = app.metrics().await;
    assert!(text.contains("# TYPE http_requests_total counter"), "{text}");
    assert!(text.contains(r#"route="/healthz""#), "{text}");
    assert!(text.contains(r#"status="401""#), "{text}");
    assert!(text.contains("http_request_duration_seconds_bucket"), "{text}");
}

#[tokio::test]
async fn a_restart_keeps_data_and_does_not_reseed() {
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    let dir = app.stop().await;

    // second start: different bootstrap passwords must not apply
    let settings = test_settings(dir.path());
    let again = jpu_share::startup::Application::build(
        settings.clone(),
        jpu_share::startup::BootstrapPasswords { admin: Some("other".into()), demo: Some("other".into()) },
    )
    .await
    .unwrap();
    let mut again = again;
    assert!(again.take_seeded().is_none(), "an existing database is never reseeded");
    drop(again);

    let app = TestApp::spawn_with(dir, settings).await;
    assert_eq!(app.me(Some(&token)).await.status(), StatusCode::OK, "token survives restart");
    assert_eq!(app.create_token("admin", "other").await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.create_token("admin", ADMIN_PASSWORD).await.status(), StatusCode::CREATED);
    let (nodes, users) =
        (app.sql_number("SELECT COUNT(*) FROM nodes").await, app.sql_number("SELECT COUNT(*) FROM users").await);
    assert_eq!((nodes, users), (2.0, 2.0));
}

#[tokio::test]
async fn a_config_file_and_env_layer_over_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("from-file.db");
    let file = dir.path().join("jpu.toml");
    std::fs::write(
        &file,
        format!(
            "[server]\nbind = \"127.0.0.1:0\"\n[database]\nurl = \"sqlite://{}\"\n[demo]\nseed = false\n",
            db.display()
        ),
    )
    .unwrap();
    let settings = Settings::load(Some(&file)).unwrap();
    assert!(!settings.demo.seed);
    let app = TestApp::spawn_with(dir, settings).await;
    assert!(db.exists(), "database created where the file says");
    // without the demo seed only the admin exists
    assert_eq!(app.create_token("demo", DEMO_PASSWORD).await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.create_token("admin", ADMIN_PASSWORD).await.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn an_unusable_database_path_is_a_startup_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let mut settings = test_settings(dir.path());
    settings.database.url = format!("sqlite://{}/sub/jpu.db", blocker.display());
    let err = jpu_share::startup::Application::build(settings, Default::default()).await.err().expect("fails");
    assert!(err.to_string().contains("directory"), "{err}");
}

/// api.md: a `database.url` of another scheme is refused at start with a
/// clear error, never taken as a file name (and a password in it is not
/// shown).
#[tokio::test]
async fn a_database_url_that_is_not_sqlite_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    for (url, says) in [
        // PostgreSQL is a database the server runs on: one it cannot reach
        // stops the start, with the reason and never the password
        ("postgres://jpu:s3cret@db.example.edu/jpu", "cannot open the database"),
        ("mysql://db.example.edu/jpu", "sqlite:// or postgres://"),
        ("jpu.db", "sqlite:// or postgres://"),
    ] {
        let mut settings = test_settings(dir.path());
        settings.database.url = url.into();
        let err = jpu_share::startup::Application::build(settings, Default::default()).await.err().expect(url);
        let text = err.to_string();
        assert!(text.contains(says) && !text.contains("s3cret"), "{url}: {text}");
        assert!(!dir.path().join("jpu.db").exists() || url != "jpu.db", "not made as a file");
    }
    assert!(!std::path::Path::new("jpu.db").exists(), "nothing made in the working directory");
}

#[tokio::test]
async fn responses_are_compressed_for_clients_that_accept_it() {
    let app = crate::helpers::TestApp::spawn().await;
    for encoding in ["br", "gzip"] {
        let resp =
            app.client.get(app.url("/v1/openapi.json")).header("accept-encoding", encoding).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()["content-encoding"], encoding);
        let compressed = resp.bytes().await.unwrap().len();
        let plain = app.get(None, "/v1/openapi.json").await.bytes().await.unwrap().len();
        assert!(compressed * 4 < plain, "{encoding}: {compressed} of {plain} bytes");
    }
}

/// #44 (5): what a Grafana board needs, by the names api.md fixes: the
/// build, unfinished jobs by state, tier and lab, GPUs by what they do,
/// nodes by state, ended jobs by reason, failed deliveries, open sessions
/// and refused sign-ins.
#[tokio::test]
async fn metrics_say_what_the_cluster_is_doing() {
    let app = TestApp::spawn_local().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    assert_eq!(app.create_token("demo", "not-the-password").await.status(), StatusCode::UNAUTHORIZED);
    let failed = app.submit_ok(&demo, serde_json::json!({"name": "fails", "command": "exit 3", "num_gpus": 1})).await;
    app.wait_state(&demo, failed["id"].as_i64().unwrap(), "FAILED").await;
    let drained = app.post(Some(&admin), "/v1/admin/nodes/node-3080/drain", serde_json::json!({})).await;
    assert!(drained.status().is_success());
    let held = serde_json::json!({"name": "waits", "command": "true", "num_gpus": 2, "min_vram_gb": 99});
    let _ = app.submit(&demo, held).await;
    app.submit_ok(&demo, serde_json::json!({"name": "w", "command": "sleep 30", "num_gpus": 2})).await;
    // one that waits for the GPUs "w" holds, with the cycle's reason
    let queued = app.submit_ok(&demo, serde_json::json!({"name": "q", "command": "true", "num_gpus": 2})).await;
    let queued = app
        .wait_job(&demo, queued["id"].as_i64().unwrap(), "a pending reason", |j| j["pending_reason"].is_string())
        .await;
    let text = app.metrics().await;
    // by the reason's code (the API's text names nodes and counts, and
    // moves between cycles); present, its value racy: the tests' servers
    // share one recorder
    assert!(queued["pending_reason"].is_string());
    let code = |l: &str| l.strip_prefix("jpu_jobs_pending{reason=\"")?.split('"').next().map(str::to_string);
    let codes: Vec<String> = text.lines().filter_map(code).collect();
    assert!(!codes.is_empty(), "pending reasons in:\n{text}");
    assert!(codes.iter().all(|c| c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_')), "{codes:?}");
    for wanted in [
        "jpu_build_info{version=\"",
        "jpu_jobs{",
        "lab=\"demo-lab\"",
        "jpu_gpus{",
        "node=\"node-3080\"",
        "jpu_nodes{state=\"UP\"}",
        "jpu_jobs_ended_total{reason=\"NONZERO_EXIT\"}",
        "jpu_notification_failures_total",
        "jpu_sessions_open",
        "jpu_sign_in_refused_total",
    ] {
        assert!(text.contains(wanted), "{wanted} missing from:\n{text}");
    }
    let refused = text.lines().find(|l| l.starts_with("jpu_sign_in_refused_total ")).unwrap();
    assert!(refused.split(' ').nth(1).unwrap().parse::<f64>().unwrap() >= 1.0, "{refused}");
}

async fn jpu_share_binary(args: &[&str], db: &std::path::Path) -> std::process::Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .args(args)
        .env("JPU__DATABASE__URL", format!("sqlite://{}", db.display()))
        .output()
        .await
        .unwrap()
}

/// #44 (2, 7): `jpu-share migrate --check` says what a start would apply
/// and changes nothing; a database a newer binary migrated is named as
/// such; a backup into a missing folder says the folder is missing.
#[tokio::test]
async fn migrate_check_lists_pending_migrations_and_changes_nothing() {
    let app = TestApp::spawn().await;
    if let Some(url) = app.database_url() {
        // PostgreSQL: the database as the server left it (the rest below
        // is about SQLite's files)
        let current = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
            .args(["migrate", "--check"])
            .env("JPU__DATABASE__URL", url)
            .output()
            .await
            .unwrap();
        assert_eq!(current.status.code(), Some(0), "{current:?}");
        assert!(String::from_utf8_lossy(&current.stdout).contains("no pending migrations"), "{current:?}");
        return;
    }
    let db = app.db_path();
    let current = jpu_share_binary(&["migrate", "--check"], &db).await;
    assert_eq!(current.status.code(), Some(0), "{current:?}");
    // a URL it cannot read: exit 2, the reason, never the password
    let secret = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .args(["migrate", "--check"])
        .env("JPU__DATABASE__URL", "postgres://jpu:s3cret@db.example.edu/jpu")
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&secret.stderr);
    assert_eq!(secret.status.code(), Some(2), "{said}");
    assert!(said.contains("cannot open the database") && !said.contains("s3cret"), "{said}");
    assert!(String::from_utf8_lossy(&current.stdout).contains("no pending migrations"), "{current:?}");

    let empty = app.dir.path().join("empty.db");
    std::fs::File::create(&empty).unwrap();
    let pending = jpu_share_binary(&["migrate", "--check"], &empty).await;
    assert_eq!(pending.status.code(), Some(1), "{pending:?}");
    let out = String::from_utf8_lossy(&pending.stdout);
    assert!(out.contains("pending migration(s)") && out.contains("20261202000001 init"), "{out}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "nothing was changed");
    let missing = jpu_share_binary(&["migrate", "--check"], &app.dir.path().join("none.db")).await;
    assert_eq!(missing.status.code(), Some(2), "{missing:?}");
    assert!(!app.dir.path().join("none.db").exists());

    app.sql("INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (29991231000001, 'from the future', 1, x'00', 0)").await;
    let newer = jpu_share_binary(&["migrate", "--check"], &db).await;
    assert_eq!(newer.status.code(), Some(1), "{newer:?}");
    assert!(String::from_utf8_lossy(&newer.stdout).contains("newer jpu-share"), "{newer:?}");

    let into_nowhere =
        jpu_share_binary(&["backup", app.dir.path().join("no/such/folder/copy.db").to_str().unwrap()], &db).await;
    assert_eq!(into_nowhere.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&into_nowhere.stderr).contains("does not exist"), "{into_nowhere:?}");
}

/// #44 (5): every metric the Grafana board in the repository queries is
/// one `/metrics` serves.
#[tokio::test]
async fn the_grafana_board_queries_only_metrics_that_exist() {
    let board: serde_json::Value =
        serde_json::from_str(include_str!("../../grafana/jpu-share.json")).expect("the board is JSON");
    let app = TestApp::spawn_local().await;
    let _ = app.create_token("demo", "wrong-password").await;
    let demo = app.demo_token().await;
    app.run_job(&demo, "ends", "true").await;
    app.submit_ok(&demo, serde_json::json!({"name": "stays", "command": "sleep 30", "num_gpus": 1})).await;
    let served = app.metrics().await;
    let names = regex::Regex::new(r"\bjpu_[a-z_]+").unwrap();
    let mut queried = Vec::new();
    for panel in board["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            queried.extend(names.find_iter(target["expr"].as_str().unwrap()).map(|m| m.as_str().to_string()));
        }
    }
    assert!(queried.len() >= 10, "{queried:?}");
    for name in queried {
        assert!(
            served.lines().any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} "))),
            "{name} is not served"
        );
    }
}

/// #44 (3): `jpu-share config --print-defaults` prints every setting with
/// its meaning, as a file `serve --config` takes as it is.
#[tokio::test]
async fn the_defaults_print_as_a_config_file_the_server_starts_with() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu-share"))
        .args(["config", "--print-defaults"])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[storage]\n") && text.contains("home_quota_gb = 50.0"), "{text}");
    assert!(text.contains("# each home's quota"), "meanings come along: {text}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jpu.toml");
    std::fs::write(&file, &text).unwrap();
    let mut settings = jpu_share::config::Settings::load(Some(&file)).expect("the printed file loads");
    settings.server.bind = "127.0.0.1:0".into();
    settings.database.url = format!("sqlite://{}", dir.path().join("jpu.db").display());
    settings.executor.output_root = dir.path().join("jobs");
    settings.storage.root = dir.path().join("storage");
    let app = TestApp::spawn_with(dir, settings).await;
    assert_eq!(app.healthz().await.status(), StatusCode::OK);
}

/// #45 (3, 5): two instances on one PostgreSQL database and one output
/// folder: the first schedules, the second stands by (and serves: a
/// browser signed in on one is signed in on the other); `kill -9` of the
/// scheduler with jobs waiting → the standby takes the lapsed lease and
/// every job runs exactly once.
#[tokio::test]
async fn on_postgres_a_standby_takes_over_when_the_scheduler_is_killed() {
    let Some(cluster) = crate::helpers::postgres_cluster() else {
        eprintln!("on SQLite there is one instance; skipping");
        return;
    };
    let dir = crate::helpers::shared_tempdir();
    let url = crate::helpers::postgres_database_for(&cluster, dir.path());
    let env = [
        ("JPU__DATABASE__URL", url.as_str()),
        ("JPU__HA__LEASE_SECONDS", "4"),
        ("JPU__HA__RENEW_SECONDS", "1"),
        ("JPU__EXECUTOR__ALLOW_UNISOLATED", "true"),
    ];
    let first = crate::process::ServerProcess::start(dir.path(), &env).await;
    let readyz = |base: String| async move {
        let resp = client().get(format!("{base}/readyz")).send().await.unwrap();
        resp.json::<Value>().await.unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while readyz(first.base.clone()).await["role"] != "scheduler" {
        assert!(std::time::Instant::now() < deadline, "the first instance never took the lease");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let second = crate::process::ServerProcess::start(dir.path(), &env).await;
    let (one, two) = (readyz(first.base.clone()).await, readyz(second.base.clone()).await);
    assert_eq!((one["role"].as_str(), two["role"].as_str()), (Some("scheduler"), Some("standby")));
    assert_eq!(one["epoch"], two["epoch"], "the same epoch on every instance");

    // a browser signed in on the first is signed in on the second
    let browser = client();
    let on_first = TestApp::attach(first.base.clone(), tempfile::tempdir().unwrap());
    assert_eq!(on_first.console_login_as(&browser, "demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(browser.get(format!("{}/v1/me", second.base)).send().await.unwrap().status(), StatusCode::OK);

    // jobs sent to the standby run on the scheduler
    let app = TestApp::attach(second.base.clone(), tempfile::tempdir().unwrap());
    let token = app.demo_token().await;
    let job = |name: &str| json!({"name": name, "command": "echo ran-once", "num_gpus": 1});
    let before: Vec<i64> = {
        let mut ids = Vec::new();
        for i in 0..4 {
            ids.push(app.submit_ok(&token, job(&format!("before-{i}"))).await["id"].as_i64().unwrap());
        }
        ids
    };
    for id in &before {
        app.wait_state(&token, *id, "COMPLETED").await;
    }
    // the scheduler dies; what is sent now waits for the standby to lead
    first.kill9().await;
    let killed = std::time::Instant::now();
    let mut after = Vec::new();
    for i in 0..6 {
        after.push(app.submit_ok(&token, job(&format!("after-{i}"))).await["id"].as_i64().unwrap());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while readyz(second.base.clone()).await["role"] != "scheduler" {
        assert!(std::time::Instant::now() < deadline, "the standby never took over");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    eprintln!("took over {:.1} s after the kill", killed.elapsed().as_secs_f64());
    assert!(readyz(second.base.clone()).await["epoch"].as_i64() > one["epoch"].as_i64());
    for id in before.iter().chain(&after) {
        let done = app.wait_state(&token, *id, "COMPLETED").await;
        assert_eq!(done["attempts"].as_array().map(Vec::len), Some(1), "ran exactly once: {done}");
    }
    drop(second);
    crate::helpers::drop_postgres_database(&url);
}
