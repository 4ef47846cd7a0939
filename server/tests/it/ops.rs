//! Health, metrics, maintenance status, config layering and restarts.

use crate::helpers::*;
use jpu_share::config::Settings;
use reqwest::StatusCode;
use serde_json::Value;

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
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", app.db_path().display())).await.unwrap();
    let (nodes,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM nodes").fetch_one(&pool).await.unwrap();
    let (users,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users").fetch_one(&pool).await.unwrap();
    assert_eq!((nodes, users), (2, 2));
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
