//! Tokens, sessions' API side, 401/403 paths and sign-in throttling.

use crate::helpers::*;
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test]
async fn token_issue_me_and_revoke() {
    let app = TestApp::spawn().await;
    let resp = app.create_token("demo", DEMO_PASSWORD).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value = resp.json().await.unwrap();
    let token = body["token"].as_str().unwrap().to_string();
    let expires = body["expires_at"].as_str().unwrap();
    assert!(expires.ends_with('Z') && expires.contains('T'), "RFC 3339: {expires}");

    let me: Value = app.me(Some(&token)).await.json().await.unwrap();
    assert_eq!(me["username"], "demo");
    assert_eq!(me["lab"], "demo-lab");
    assert_eq!(me["role"], "researcher");
    assert_eq!(me["max_concurrent"], 2);

    assert_eq!(app.revoke_token(&token).await.status(), StatusCode::NO_CONTENT);
    assert_error(app.me(Some(&token)).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    // revoking one token leaves others alive
    let other = app.demo_token().await;
    assert_eq!(app.me(Some(&other)).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_database_never_holds_the_token_itself() {
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    if app.on_postgres() {
        // no file to read: no row anywhere holds it
        let found = app
            .sql_number(&format!(
                "SELECT COUNT(*) FROM api_tokens t WHERE t.token_hash = '{token}' OR t.label = '{token}' \
                 OR EXISTS (SELECT 1 FROM audit_log a WHERE a.detail LIKE '%{token}%')"
            ))
            .await;
        assert_eq!(found, 0.0, "token stored in clear");
        return;
    }
    let raw = std::fs::read(app.db_path()).unwrap();
    let wal = std::fs::read(app.db_path().with_extension("db-wal")).unwrap_or_default();
    let needle = token.as_bytes();
    for bytes in [&raw, &wal] {
        assert!(!bytes.windows(needle.len()).any(|w| w == needle), "token stored in clear");
    }
}

#[tokio::test]
async fn expired_tokens_are_refused() {
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    assert_eq!(app.me(Some(&token)).await.status(), StatusCode::OK);
    // move every token's expiry into the past, as time passing would
    app.sql("UPDATE api_tokens SET expires_at = 1000").await;
    assert_error(app.me(Some(&token)).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn unauthenticated_paths_answer_401_with_the_error_body() {
    let app = TestApp::spawn().await;
    assert_error(app.me(None).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    assert_error(app.me(Some("jpu_not-a-real-token")).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    let malformed = app.client.get(app.url("/v1/me")).header("Authorization", "Basic abc").send().await.unwrap();
    assert_error(malformed, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    let wrong = app.create_token("demo", "wrong password").await;
    assert_error(wrong, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    let nobody = app.create_token("nobody", "whatever").await;
    assert_error(nobody, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn admin_endpoints_refuse_researchers_with_403() {
    let app = TestApp::spawn().await;
    let researcher = app.demo_token().await;
    assert_error(app.audit(&researcher).await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    let admin = app.admin_token().await;
    let resp = app.audit(&admin).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let page: Value = resp.json().await.unwrap();
    assert!(page["entries"].is_array());
    let anon = app.client.get(app.url("/v1/admin/audit")).send().await.unwrap();
    assert_error(anon, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn bad_request_bodies_get_api_errors() {
    let app = TestApp::spawn().await;
    let not_json = app
        .client
        .post(app.url("/v1/auth/token"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_error(not_json, StatusCode::BAD_REQUEST, "BAD_REQUEST").await;
    let no_type = app.client.post(app.url("/v1/auth/token")).body("{}").send().await.unwrap();
    assert_error(no_type, StatusCode::BAD_REQUEST, "BAD_REQUEST").await;
    let missing =
        app.client.post(app.url("/v1/auth/token")).json(&serde_json::json!({"username": "demo"})).send().await.unwrap();
    let msg = assert_error(missing, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(msg.contains("password"), "names the field: {msg}");
    let huge = "x".repeat(300 * 1024);
    let too_big = app
        .client
        .post(app.url("/v1/auth/token"))
        .json(&serde_json::json!({"username": huge, "password": "x"}))
        .send()
        .await
        .unwrap();
    assert_error(too_big, StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE").await;
    let admin = app.admin_token().await;
    let bad_limit = app.client.get(app.url("/v1/admin/audit?limit=abc")).bearer_auth(&admin).send().await.unwrap();
    assert_error(bad_limit, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert_error(app.page("/v1/no/such/thing").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
}

#[tokio::test]
async fn repeated_failures_slow_a_user_down_but_not_others() {
    let app = TestApp::spawn().await;
    for _ in 0..5 {
        assert_eq!(app.create_token("demo", "guess").await.status(), StatusCode::UNAUTHORIZED);
    }
    // the right password is refused too until the pause has passed
    let resp = app.create_token("demo", DEMO_PASSWORD).await;
    assert_eq!(resp.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    assert_error(resp, StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_ATTEMPTS").await;
    // another user is unaffected
    assert_eq!(app.create_token("admin", ADMIN_PASSWORD).await.status(), StatusCode::CREATED);
}
