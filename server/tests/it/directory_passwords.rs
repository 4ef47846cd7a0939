//! Campuses with a directory and no OpenID provider (#44): a person's
//! password is checked by binding to the real test directory (`slapd`) as
//! them; the directory decides who gets in and as what, exactly as with
//! campus sign-in; local accounts keep their own password.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::directory::{delete_entry, slapd};
use crate::helpers::*;

async fn ldap_only(slapd: &crate::parts::Slapd, secrets: &std::path::Path) -> TestApp {
    let mut ldap = slapd.settings(secrets);
    ldap.recheck_seconds = 0;
    TestApp::spawn_local_with(|s| {
        s.directory.ldap = ldap;
    })
    .await
}

async fn token_of(app: &TestApp, user: &str, password: &str) -> String {
    let resp = app.create_token(user, password).await;
    assert_eq!(resp.status(), StatusCode::CREATED, "{user} signs in");
    resp.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_directorys_password_signs_its_people_in_as_the_directory_says() {
    let Some(slapd) = slapd().await else { return };
    let secrets = tempfile::tempdir().unwrap();
    let app = ldap_only(&slapd, secrets.path()).await;

    // first sign-in makes the account from the directory's entry
    let kim = token_of(&app, "kim", "kim-directory-secret").await;
    let me: Value = app.me(Some(&kim)).await.json().await.unwrap();
    assert_eq!((me["lab"].as_str(), me["role"].as_str()), (Some("vision"), Some("researcher")), "{me}");
    assert_eq!((me["unix_uid"].as_i64(), me["auth"].as_str()), (Some(20001), Some("password")), "{me}");
    let park = token_of(&app, "park", "park-directory-secret").await;
    let me: Value = app.me(Some(&park)).await.json().await.unwrap();
    assert_eq!(me["role"], "admin", "gpu-admins makes an admin: {me}");

    // the console's form too
    let b = client();
    let resp = app.console_login_as(&b, "kim", "kim-directory-secret").await;
    assert_eq!(resp.headers()["location"], "/", "signed in");
    assert_eq!(b.get(app.url("/v1/me")).send().await.unwrap().status(), StatusCode::OK);

    // wrong, empty (an "unauthenticated bind" would succeed), unknown to
    // the directory, a filter for a name: all alike
    for (user, password) in [
        ("kim", "wrong"),
        ("kim", ""),
        ("choi", "anything"),
        ("*", "kim-directory-secret"),
        ("kim)(uid=*", "kim-directory-secret"),
        // the directory matches `uid` regardless of case; a name is kim's
        // only as her entry spells it
        ("KIM", "kim-directory-secret"),
    ] {
        assert_error(app.create_token(user, password).await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
    }
    let resp = app.console_login_as(&client(), "kim", "wrong").await;
    assert_eq!(resp.headers()["location"], "/login?error=credentials");

    // known to the directory, in no lab group: refused, and told why
    let why =
        assert_error(app.create_token("han", "han-directory-secret").await, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    assert!(why.contains("lab"), "{why}");
    let resp = app.console_login_as(&client(), "han", "han-directory-secret").await;
    assert_eq!(resp.headers()["location"], "/login?error=refused");

    // the password is the university's: neither kim nor an admin sets one here
    use leptos::server_fn::ServerFn;
    let resp = b
        .post(app.url(app::api::ChangePassword::PATH))
        .header("origin", &app.base)
        .form(&[("current", "kim-directory-secret"), ("new", "a-local-password-1")])
        .send()
        .await
        .unwrap();
    assert!(!resp.status().is_success(), "refused: {}", resp.text().await.unwrap());
    let admin = app.admin_token().await;
    let resp = app.patch(&admin, "/v1/admin/users/kim", json!({"password": "a-local-password-1"})).await;
    let why = assert_error(resp, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert!(why.contains("directory"), "{why}");
    // an account an admin made keeps its own password: the directory's
    // person of that name does not take it over (han's password would
    // have given a 403 "no lab group" had the directory been asked)
    let made = app
        .post(
            Some(&admin),
            "/v1/admin/users",
            json!({"username": "han", "password": "admins-password-han", "lab": "vision", "role": "researcher"}),
        )
        .await;
    assert_eq!(made.status(), StatusCode::CREATED);
    assert_error(app.create_token("han", "han-directory-secret").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED")
        .await;
    assert_eq!(app.create_token("han", "admins-password-han").await.status(), StatusCode::CREATED);
    // the seeded admin is local: its own password still works
    assert_eq!(app.create_token("admin", ADMIN_PASSWORD).await.status(), StatusCode::CREATED);

    // the sign-in slow-down holds: after 5 failures even the right password waits
    for _ in 0..5 {
        let _ = app.create_token("park", "wrong").await;
    }
    assert_eq!(app.create_token("park", "park-directory-secret").await.status(), StatusCode::TOO_MANY_REQUESTS);

    // the directory drops kim: her token ends at its next use
    delete_entry(&slapd.url, "uid=kim,ou=people,dc=example,dc=edu").await;
    assert_eq!(app.me(Some(&kim)).await.status(), StatusCode::UNAUTHORIZED);
    assert_error(app.create_token("kim", "kim-directory-secret").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED")
        .await;
}

#[tokio::test]
async fn a_directory_reached_in_clear_over_the_network_stops_start_up_when_it_is_the_only_way_in() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    settings.directory.ldap = jpu_share::config::LdapSettings {
        url: "ldap://192.0.2.10:389".into(),
        user_base: "ou=people,dc=example,dc=edu".into(),
        group_base: "ou=groups,dc=example,dc=edu".into(),
        lab_group: "^gpu-lab-(.+)$".into(),
        ..Default::default()
    };
    let err =
        jpu_share::startup::Application::build(settings.clone(), Default::default()).await.err().expect("refused");
    assert!(err.to_string().contains("ldaps://") && err.to_string().contains("starttls"), "{err}");
    settings.directory.ldap.starttls = true;
    assert!(jpu_share::startup::Application::build(settings, Default::default()).await.is_ok(), "with StartTLS");
}
