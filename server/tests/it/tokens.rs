//! Personal tokens (api.md): made by name with an expiry, shown once,
//! listed with their last use, revoked by their owner only; and password
//! sign-in kept to local accounts (`auth.passwords = false`).

use crate::helpers::*;
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn create(app: &TestApp, token: &str, body: Value) -> reqwest::Response {
    app.post(Some(token), "/v1/auth/tokens", body).await
}

async fn delete(app: &TestApp, token: &str, id: i64) -> reqwest::Response {
    app.client.delete(app.url(&format!("/v1/auth/tokens/{id}"))).bearer_auth(token).send().await.expect("request")
}

async fn listed(app: &TestApp, token: &str) -> Vec<Value> {
    let resp = app.get(Some(token), "/v1/auth/tokens").await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    body["tokens"].as_array().unwrap().clone()
}

fn days_from_now(rfc3339: &str) -> f64 {
    let at = time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339).unwrap();
    (at - time::OffsetDateTime::now_utc()).as_seconds_f64() / 86_400.0
}

#[tokio::test]
async fn a_personal_token_is_shown_once_works_lists_its_last_use_and_ends_when_revoked() {
    let app = TestApp::spawn().await;
    let session = app.demo_token().await;
    let resp = create(&app, &session, json!({"name": "  nightly sweep  ", "expires_in_days": 7})).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let made: Value = resp.json().await.unwrap();
    let (id, secret) = (made["id"].as_i64().unwrap(), made["token"].as_str().unwrap().to_string());
    assert_eq!(made["name"], "nightly sweep", "trimmed");
    let days = days_from_now(made["expires_at"].as_str().unwrap());
    assert!((6.99..=7.01).contains(&days), "expires in 7 days: {days}");
    let default = create(&app, &session, json!({"name": "default"})).await.json::<Value>().await.unwrap();
    let days = days_from_now(default["expires_at"].as_str().unwrap());
    assert!((89.99..=90.01).contains(&days), "default 90 days: {days}");

    // it works; the list shows it by name, never a secret, with its use
    let me: Value = app.me(Some(&secret)).await.json().await.unwrap();
    assert_eq!(me["username"], "demo");
    assert_eq!(me["auth"], "password");
    let mut used = None;
    for _ in 0..100 {
        let tokens = listed(&app, &session).await;
        let text = serde_json::to_string(&tokens).unwrap();
        assert!(!text.contains(&secret) && !text.contains("token\""), "no secrets listed: {text}");
        let mine = tokens.iter().find(|t| t["id"] == id).expect("listed").clone();
        assert_eq!(mine["name"], "nightly sweep");
        if !mine["last_used_at"].is_null() {
            used = Some(mine);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(used.is_some(), "its last use is listed");
    let sign_in = listed(&app, &session).await.into_iter().find(|t| t["name"].is_null());
    assert!(sign_in.is_some(), "the sign-in's own token is listed too (it acts for the user)");

    // nobody else can revoke it, not even an admin through this endpoint
    let admin = app.admin_token().await;
    let other = app.researcher(&admin, "other", "other-lab").await;
    assert_error(delete(&app, &other, id).await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert_error(delete(&app, &admin, id).await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert_eq!(app.me(Some(&secret)).await.status(), StatusCode::OK);
    // its owner can; it stops at once, and a second revoke finds nothing
    assert_eq!(delete(&app, &session, id).await.status(), StatusCode::NO_CONTENT);
    assert_error(app.me(Some(&secret)).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    assert_error(delete(&app, &session, id).await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
    assert!(listed(&app, &session).await.iter().all(|t| t["id"] != id));
}

#[tokio::test]
async fn personal_token_fields_are_checked_at_their_edges() {
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    let long = "n".repeat(64);
    for (body, status, field) in [
        (json!({"name": "a", "expires_in_days": 1}), 201, ""),
        (json!({"name": "a", "expires_in_days": 365}), 201, ""),
        (json!({"name": long}), 201, ""),
        (json!({"name": "a", "expires_in_days": 0}), 422, "expires_in_days"),
        (json!({"name": "a", "expires_in_days": 366}), 422, "expires_in_days"),
        (json!({"name": "a", "expires_in_days": -5}), 422, "expires_in_days"),
        (json!({"name": format!("{long}n")}), 422, "name"),
        (json!({"name": "   "}), 422, "name"),
        (json!({"name": "a\u{202e}b"}), 422, "name"),
        (json!({"name": "a\nb"}), 422, "name"),
        (json!({"expires_in_days": 3}), 422, ""),
        (json!({"name": "a", "scope": "admin"}), 422, ""),
    ] {
        let resp = create(&app, &token, body.clone()).await;
        assert_eq!(resp.status().as_u16(), status, "{body}");
        if status == 422 && !field.is_empty() {
            let err: Value = resp.json().await.unwrap();
            assert_eq!(err["error"]["code"], "VALIDATION", "{body}");
            assert!(err["error"]["message"].as_str().unwrap().contains(field), "{body}: {err}");
        }
    }
    // like every id in a path: not a number, no such token
    let resp = app.client.delete(app.url("/v1/auth/tokens/abc")).bearer_auth(&token).send().await.unwrap();
    assert_error(resp, StatusCode::NOT_FOUND, "NOT_FOUND").await;
}

#[tokio::test]
async fn a_personal_token_ends_when_its_user_is_disabled() {
    let app = TestApp::spawn().await;
    let admin = app.admin_token().await;
    let session = app.researcher(&admin, "leaver", "demo-lab").await;
    let made: Value = create(&app, &session, json!({"name": "cron"})).await.json().await.unwrap();
    let secret = made["token"].as_str().unwrap();
    assert_eq!(app.me(Some(secret)).await.status(), StatusCode::OK);
    let resp = app.patch(&admin, "/v1/admin/users/leaver", json!({"disabled": true})).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_error(app.me(Some(secret)).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn with_passwords_off_only_local_accounts_may_use_one_and_the_rest_are_told_which_button() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    settings.auth.passwords = false;
    settings.auth.oidc.display_name = "SNU sign-in".into();
    let app = TestApp::spawn_with(dir, settings).await;

    // the seeded admin is local: the break-glass account still works
    let admin = app.admin_token().await;
    let me: Value = app.me(Some(&admin)).await.json().await.unwrap();
    assert_eq!(me["auth"], "password");
    // everyone else, known or not, right password or not, is sent to
    // the university's button, before any password check
    for (user, password) in [("demo", DEMO_PASSWORD), ("demo", "wrong-password"), ("nobody-here", "whatever-pw")] {
        let message = assert_error(app.create_token(user, password).await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
        assert!(message.contains("SNU sign-in"), "{message}");
    }
    let resp = app.console_login("demo", DEMO_PASSWORD).await;
    assert_eq!(resp.headers()["location"], "/login?error=passwords_off");
    let page = app.page("/login?error=passwords_off").await.text().await.unwrap();
    assert!(page.contains("Sign in with “SNU sign-in” instead"), "the sign-in page names the button");
    // a local account an admin makes may use its password; a wrong one is
    // still just wrong
    let resp = app
        .post(
            Some(&admin),
            "/v1/admin/users",
            json!({"username": "ops2", "password": "ops2-password", "lab": "demo-lab", "role": "admin", "local": true}),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    assert_eq!(app.create_token("ops2", "ops2-password").await.status(), StatusCode::CREATED);
    assert_error(app.create_token("ops2", "not-the-password").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    let users: Value = app.get(Some(&admin), "/v1/admin/users").await.json().await.unwrap();
    let mut local: Vec<&str> = users
        .as_array()
        .or(users["users"].as_array())
        .unwrap()
        .iter()
        .filter(|u| u["local"] == true)
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    local.sort();
    assert_eq!(local, ["admin", "ops2"]);
}

/// T1: a token made with a token dies with it, down the line; a person
/// has at most 100 named tokens live (the 101st is a 409 until one goes);
/// an admin lists anyone's tokens and revokes one (audited).
#[tokio::test]
async fn made_tokens_die_with_their_maker_are_capped_and_an_admin_can_revoke_any() {
    let app = TestApp::spawn().await;
    let demo = app.demo_token().await;
    let admin = app.admin_token().await;
    let made = |resp: Value| (resp["id"].as_i64().unwrap(), resp["token"].as_str().unwrap().to_string());
    let (parent_id, parent) = made(create(&app, &demo, json!({"name": "parent"})).await.json().await.unwrap());
    let (_, child) = made(create(&app, &parent, json!({"name": "child"})).await.json().await.unwrap());
    let (_, grandchild) = made(create(&app, &child, json!({"name": "grandchild"})).await.json().await.unwrap());
    let (_, sibling) = made(create(&app, &demo, json!({"name": "sibling"})).await.json().await.unwrap());
    assert_eq!(delete(&app, &demo, parent_id).await.status(), StatusCode::NO_CONTENT);
    for (what, token) in [("parent", &parent), ("child", &child), ("grandchild", &grandchild)] {
        assert_eq!(app.me(Some(token)).await.status(), StatusCode::UNAUTHORIZED, "the {what} outlived the revocation");
    }
    assert_eq!(app.me(Some(&sibling)).await.status(), StatusCode::OK, "a token made otherwise lives on");
    // a revoked token makes nothing more (checked where the new one is stored)
    assert_error(create(&app, &child, json!({"name": "late"})).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED")
        .await;

    // the cap, at its edge: 100 named live (sibling is one; the revoked are not)
    for i in 1..100 {
        let resp = create(&app, &demo, json!({"name": format!("script {i}")})).await;
        assert_eq!(resp.status(), StatusCode::CREATED, "token {}", i + 1);
    }
    let over = create(&app, &demo, json!({"name": "one too many"})).await;
    let why = assert_error(over, StatusCode::CONFLICT, "CONFLICT").await;
    assert!(why.contains("100"), "{why}");
    // a sign-in's token is not a named one
    assert_eq!(app.create_token("demo", DEMO_PASSWORD).await.status(), StatusCode::CREATED);

    // an admin sees demo's tokens and revokes one; it is audited
    let listed: Value = app.get(Some(&admin), "/v1/admin/users/demo/tokens").await.json().await.unwrap();
    let tokens = listed["tokens"].as_array().unwrap();
    assert!(tokens.len() >= 100, "{}", tokens.len());
    assert!(tokens.iter().all(|t| t.get("token").is_none()), "never a secret");
    let sibling_id = tokens.iter().find(|t| t["name"] == "sibling").unwrap()["id"].as_i64().unwrap();
    let gone = app.client.delete(app.url(&format!("/v1/admin/tokens/{sibling_id}"))).bearer_auth(&admin).send().await;
    assert_eq!(gone.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(app.me(Some(&sibling)).await.status(), StatusCode::UNAUTHORIZED);
    let again = app.client.delete(app.url(&format!("/v1/admin/tokens/{sibling_id}"))).bearer_auth(&admin).send().await;
    assert_error(again.unwrap(), StatusCode::NOT_FOUND, "NOT_FOUND").await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("token.revoke"), "{audit}");
    // with one gone, demo may make one again
    assert_eq!(create(&app, &demo, json!({"name": "now it fits"})).await.status(), StatusCode::CREATED);
    let unknown = app.get(Some(&admin), "/v1/admin/users/nobody-here/tokens").await;
    assert_error(unknown, StatusCode::NOT_FOUND, "NOT_FOUND").await;
}
