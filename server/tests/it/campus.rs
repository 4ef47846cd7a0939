//! Sign-in through the university against a real OpenID Provider
//! (`oidc-provider` from npm, run by `end2end/oidc/provider.mjs` on
//! loopback with its static accounts): the way through, who is let in as
//! what, and the attacks on the callback (tampered state, another
//! browser's callback, a replayed code, open redirects through `next`).

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::*;

pub use crate::parts::Provider;

/// The test provider, or None when node or its packages are missing and
/// the run does not require it (`JPU_TEST_OIDC=1` does).
pub async fn provider() -> Option<Provider> {
    if !crate::parts::provider_installed() {
        assert!(
            std::env::var_os("JPU_TEST_OIDC").is_none(),
            "JPU_TEST_OIDC is set but oidc-provider is not installed: run .ci/install-tools test"
        );
        eprintln!("no oidc-provider: skipping a university sign-in test (make test runs it)");
        return None;
    }
    Some(Provider::start().await)
}

/// A server signing in through `provider`; its port is chosen first, as
/// the redirect URI is made from `server.public_url`.
pub async fn server(provider: &Provider, change: impl FnOnce(&mut jpu_share::config::Settings)) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    sign_in_through(provider, &mut settings, dir.path());
    change(&mut settings);
    TestApp::spawn_with(dir, settings).await
}

/// Settings for signing in through `provider` (its client secret kept in
/// `secrets`), on a port chosen here.
pub fn sign_in_through(provider: &Provider, settings: &mut jpu_share::config::Settings, secrets: &std::path::Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    settings.server.bind = format!("127.0.0.1:{port}");
    settings.server.public_url = format!("http://127.0.0.1:{port}");
    let secret = secrets.join("client-secret");
    std::fs::write(&secret, "jpu-share-test-secret\n").unwrap();
    let oidc = &mut settings.auth.oidc;
    oidc.issuer = provider.issuer.clone();
    oidc.client_id = "jpu-share".into();
    oidc.client_secret_file = Some(secret);
    oidc.lab_group = "^gpu-lab-(.+)$".into();
    oidc.admin_groups = vec!["gpu-admins".into()];
}

pub fn location(resp: &reqwest::Response) -> String {
    resp.headers().get("location").map(|l| l.to_str().unwrap().to_string()).unwrap_or_default()
}

/// A browser: its own cookies, no redirects followed.
pub fn browser() -> reqwest::Client {
    client()
}

/// Goes from `/auth/oidc/login?next=…` through the provider's sign-in as
/// `username`; returns the callback URL the provider sends the browser
/// to (not yet opened).
pub async fn through_provider(app: &TestApp, browser: &reqwest::Client, username: &str, next: &str) -> String {
    let start = browser.get(app.url(&format!("/auth/oidc/login?next={next}"))).send().await.unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER, "redirect to the provider");
    let authorize = location(&start);
    assert!(authorize.contains("code_challenge_method=S256") && authorize.contains("nonce="), "{authorize}");
    follow_provider(browser, authorize, username).await
}

/// Follows the provider from its authorization URL, signing in as
/// `username`; returns the callback URL it sends the browser to.
pub async fn follow_provider(browser: &reqwest::Client, authorize: String, username: &str) -> String {
    let mut url = authorize;
    let issuer = url.split("/auth?").next().unwrap().to_string();
    for _ in 0..10 {
        let resp = browser.get(&url).send().await.unwrap();
        let next_url = location(&resp);
        if next_url.contains("/auth/oidc/callback") {
            return next_url;
        }
        if resp.status() == StatusCode::OK && url.contains("/interaction/") {
            // the provider's sign-in form
            let form = [("prompt", "login"), ("login", username), ("password", "any")];
            let resp = browser.post(&url).form(&form).send().await.unwrap();
            url = absolute(&issuer, &location(&resp));
            continue;
        }
        assert!(!next_url.is_empty(), "the provider stopped at {url}: {}", resp.text().await.unwrap());
        url = absolute(&issuer, &next_url);
    }
    panic!("the provider never sent the browser back");
}

fn absolute(issuer: &str, location: &str) -> String {
    if location.starts_with("http") {
        location.to_string()
    } else {
        format!("{issuer}{location}")
    }
}

/// A browser signed in as `username` through the provider, and a
/// personal token it made (for the API calls of a test).
pub async fn signed_in_with_token(app: &TestApp, username: &str) -> (reqwest::Client, String) {
    let b = browser();
    let callback = through_provider(app, &b, username, "/").await;
    assert_eq!(b.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER, "{username} signs in");
    let made: Value = b
        .post(app.url("/v1/auth/tokens"))
        .header("origin", &app.base)
        .json(&serde_json::json!({"name": "test"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = made["token"].as_str().expect("a token").to_string();
    (b, token)
}

pub async fn me(app: &TestApp, browser: &reqwest::Client) -> reqwest::Response {
    browser.get(app.url("/v1/me")).send().await.unwrap()
}

#[tokio::test]
async fn researchers_sign_in_through_the_university_and_get_their_lab_and_role_from_its_groups() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let page = app.page("/login").await.text().await.unwrap();
    assert!(page.contains("University sign-in") && page.contains("/auth/oidc/login"), "the button is shown");

    let kim = browser();
    let callback = through_provider(&app, &kim, "kim", "/jobs").await;
    let resp = kim.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&resp), "/jobs", "lands on next");
    let who: Value = me(&app, &kim).await.json().await.unwrap();
    assert_eq!(who["username"], "kim");
    assert_eq!(who["lab"], "vision", "created from gpu-lab-vision");
    assert_eq!(who["role"], "researcher");
    assert_eq!(who["auth"], "oidc");

    let park = browser();
    let callback = through_provider(&app, &park, "park", "/").await;
    assert_eq!(park.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let who: Value = me(&app, &park).await.json().await.unwrap();
    assert_eq!((who["lab"].as_str(), who["role"].as_str()), (Some("vision"), Some("admin")), "gpu-admins");

    // the university owns lab, role and uid: an admin cannot change them
    // here (other fields stay theirs); the audit log has each step
    let admin = app.admin_token().await;
    app.post(Some(&admin), "/v1/admin/labs", serde_json::json!({"name": "elsewhere"})).await;
    for patch in [
        serde_json::json!({"lab": "elsewhere"}),
        serde_json::json!({"role": "admin"}),
        serde_json::json!({"unix_uid": 5000}),
    ] {
        let refused = app.patch(&admin, "/v1/admin/users/kim", patch.clone()).await;
        let why = assert_error(refused, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(why.contains("through the university"), "{patch}: {why}");
    }
    let limit = app.patch(&admin, "/v1/admin/users/kim", serde_json::json!({"max_concurrent": 3})).await;
    assert_eq!(limit.status(), StatusCode::OK);
    // a user an admin made first for a university identity (linked to its
    // `sub`) is theirs at their first campus sign-in (and then owned by the
    // university); a name alone never is (see the test after this one)
    let made = app
        .post(
            Some(&admin),
            "/v1/admin/users",
            serde_json::json!({"username": "lee", "password": "lee-old-password", "lab": "elsewhere",
                               "role": "researcher", "campus_subject": "lee"}),
        )
        .await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let lee = browser();
    let callback = through_provider(&app, &lee, "lee", "/").await;
    assert_eq!(lee.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let who: Value = me(&app, &lee).await.json().await.unwrap();
    assert_eq!((who["lab"].as_str(), who["auth"].as_str()), (Some("nlp"), Some("oidc")));
    let again = browser();
    let callback = through_provider(&app, &again, "kim", "/").await;
    assert_eq!(again.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let who: Value = me(&app, &again).await.json().await.unwrap();
    assert_eq!(who["lab"], "vision");
    let audit: Value = app.get(Some(&admin), "/v1/admin/audit").await.json().await.unwrap();
    let text = audit.to_string();
    for needle in ["\"lab.create\"", "\"user.create\"", "\"user.update\"", "\"oidc\""] {
        assert!(text.contains(needle), "audit has {needle}: {text}");
    }

    // the password form cannot be used for them (they have none)
    assert_error(app.create_token("kim", "anything-at-all").await, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED").await;
}

#[tokio::test]
async fn the_rules_keep_out_who_has_no_lab_group_a_disabled_user_and_local_accounts() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let choi = browser();
    let callback = through_provider(&app, &choi, "choi", "/").await;
    let resp = choi.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let page = resp.text().await.unwrap();
    assert!(page.contains("in no lab group"), "{page}");
    assert_eq!(me(&app, &choi).await.status(), StatusCode::UNAUTHORIZED, "no session");

    // the university's "admin" is not this site's break-glass admin
    let impostor = browser();
    let callback = through_provider(&app, &impostor, "admin", "/").await;
    let resp = impostor.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("local account"));
    assert_eq!(me(&app, &impostor).await.status(), StatusCode::UNAUTHORIZED);

    let lee = browser();
    let callback = through_provider(&app, &lee, "lee", "/").await;
    assert_eq!(lee.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let admin = app.admin_token().await;
    let off = app.patch(&admin, "/v1/admin/users/lee", serde_json::json!({"disabled": true})).await;
    assert_eq!(off.status(), StatusCode::OK);
    assert_eq!(me(&app, &lee).await.status(), StatusCode::UNAUTHORIZED, "the session ended");
    let lee = browser();
    let callback = through_provider(&app, &lee, "lee", "/").await;
    let resp = lee.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("disabled"));
}

/// Signs `who` in at the provider; the callback's status and page.
async fn callback_as(app: &TestApp, who: &str) -> (reqwest::Client, StatusCode, String) {
    let b = browser();
    let callback = through_provider(app, &b, who, "/").await;
    let resp = b.get(&callback).send().await.unwrap();
    let status = resp.status();
    (b, status, resp.text().await.unwrap())
}

/// I1: accounts are keyed on the provider's (issuer, `sub`). A provider
/// user whose `preferred_username` is an existing account's name gets a
/// refusal naming their subject, not the account; an admin's link opens
/// it; a name differing only in case is refused; an old campus account
/// (from before identities were kept) is linked once by its name.
#[tokio::test]
async fn a_name_never_claims_an_account_only_an_admins_link_does() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let admin = app.admin_token().await;
    let demo_before: Value = app.get(Some(&app.demo_token().await), "/v1/me").await.json().await.unwrap();

    // mallory (sub `mallory`, an admin group) calls herself `demo`
    let (mallory, status, page) = callback_as(&app, "mallory").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("not linked") && page.contains("mallory"), "the refusal names the subject: {page}");
    assert_eq!(me(&app, &mallory).await.status(), StatusCode::UNAUTHORIZED, "no session");
    let demo_after: Value = app.get(Some(&app.demo_token().await), "/v1/me").await.json().await.unwrap();
    assert_eq!(
        (&demo_after["lab"], &demo_after["role"], &demo_after["auth"]),
        (&demo_before["lab"], &demo_before["role"], &demo_before["auth"]),
        "demo untouched"
    );

    // kim signs up; kimmy (sub `kimmy`) calling herself `kim` does not get in,
    // nor does `Kim`, a look-alike
    let (kim, status, _) = callback_as(&app, "kim").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, status, page) = callback_as(&app, "kimmy").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("not linked") && page.contains("kimmy"), "{page}");
    let (_, status, page) = callback_as(&app, "Kim").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("only in case"), "{page}");
    assert_eq!(me(&app, &kim).await.status(), StatusCode::OK, "kim stays signed in");
    // nor may an admin make one
    let look_alike =
        serde_json::json!({"username": "KIM", "password": "long enough pw", "lab": "vision", "role": "researcher"});
    assert_error(
        app.post(Some(&admin), "/v1/admin/users", look_alike).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;

    // an admin links demo to mallory's identity: now it opens demo (under
    // demo's name, with the lab and role her groups give)
    let linked = app.patch(&admin, "/v1/admin/users/demo", serde_json::json!({"campus_subject": "mallory"})).await;
    assert_eq!(linked.status(), StatusCode::OK);
    let (mallory, status, page) = callback_as(&app, "mallory").await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    let now: Value = me(&app, &mallory).await.json().await.unwrap();
    assert_eq!((now["username"].as_str(), now["auth"].as_str()), (Some("demo"), Some("oidc")), "{now}");
    // one identity, one account; a local account is never linked
    let taken = app.patch(&admin, "/v1/admin/users/kim", serde_json::json!({"campus_subject": "mallory"})).await;
    assert_error(taken, StatusCode::CONFLICT, "CONFLICT").await;
    let local = app.patch(&admin, "/v1/admin/users/admin", serde_json::json!({"campus_subject": "admin"})).await;
    assert_error(local, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    let long = app.patch(&admin, "/v1/admin/users/kim", serde_json::json!({"campus_subject": "x".repeat(256)})).await;
    assert_error(long, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    // unlinked: refused again, and the session it had is over
    let unlinked = app.patch(&admin, "/v1/admin/users/demo", serde_json::json!({"campus_subject": null})).await;
    assert_eq!(unlinked.status(), StatusCode::OK);
    assert_eq!(me(&app, &mallory).await.status(), StatusCode::UNAUTHORIZED, "the unlinked identity's session ended");
    let (_, status, _) = callback_as(&app, "mallory").await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // an account campus sign-in made before identities were kept is
    // linked once by its name, then keyed on that identity alone
    app.sql("UPDATE campus_identities SET issuer = '', subject = NULL WHERE user_id = (SELECT id FROM users WHERE username = 'kim')")
        .await;
    let (_, status, page) = callback_as(&app, "kimmy").await;
    assert_eq!(status, StatusCode::SEE_OTHER, "the first to come by the old name takes it: {page}");
    let (_, status, page) = callback_as(&app, "kim").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "now keyed on kimmy's identity: {page}");
}

#[tokio::test]
async fn a_tampered_state_another_browsers_callback_a_replayed_code_and_foreign_next_are_refused() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;

    // tampered state: refused, and the pending sign-in is spent
    let a = browser();
    let callback = through_provider(&app, &a, "kim", "/").await;
    let tampered = callback.replace("state=", "state=x");
    let resp = a.get(&tampered).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.text().await.unwrap().contains("state does not match"));
    assert_eq!(a.get(&callback).send().await.unwrap().status(), StatusCode::BAD_REQUEST, "one try only");
    assert_eq!(me(&app, &a).await.status(), StatusCode::UNAUTHORIZED);

    // login CSRF: an attacker's own valid callback, opened in the
    // victim's browser, signs nobody in there
    let attacker = browser();
    let callback = through_provider(&app, &attacker, "lee", "/").await;
    let victim = browser();
    let resp = victim.get(&callback).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(resp.text().await.unwrap().contains("not started in this browser"));
    assert_eq!(me(&app, &victim).await.status(), StatusCode::UNAUTHORIZED);

    // a replayed code: used once, then offered again with a fresh state
    let b = browser();
    let first = through_provider(&app, &b, "kim", "/").await;
    assert_eq!(b.get(&first).send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let c = browser();
    let second = through_provider(&app, &c, "kim", "/").await;
    let code = |url: &str| url.split("code=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let replay = second.replace(&code(&second), &code(&first));
    let resp = c.get(&replay).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "the provider refuses a code twice");
    assert_eq!(me(&app, &c).await.status(), StatusCode::UNAUTHORIZED);

    // next is kept to paths of this site
    for next in ["//evil.example/x", "https://evil.example/", "/\\evil.example", "evil.example"] {
        let d = browser();
        let encoded: String = url::form_urlencoded::byte_serialize(next.as_bytes()).collect();
        let callback = through_provider(&app, &d, "kim", &encoded).await;
        let resp = d.get(&callback).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(location(&resp), "/", "{next}");
    }
}

#[tokio::test]
async fn with_passwords_off_the_login_page_leads_with_the_university_and_folds_the_local_form() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |s| {
        s.auth.passwords = false;
        s.auth.oidc.display_name = "SNU sign-in".into();
    })
    .await;
    let page = app.page("/login").await.text().await.unwrap();
    assert!(page.contains("SNU sign-in"), "the button");
    assert!(page.contains("<details") && page.contains("Local account"), "the password form is folded away");
    // the seeded admin still gets in with its password
    assert_eq!(app.create_token("admin", ADMIN_PASSWORD).await.status(), StatusCode::CREATED);
}

/// This site's page a device sign-in sends the person to: what it says,
/// and the code its approval form posts.
pub async fn device_page(browser: &reqwest::Client, url: &str) -> (String, String) {
    let page = browser.get(url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK, "{url}");
    let html = page.text().await.unwrap();
    let code = html.split("name=\"user_code\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    (html, code)
}

/// The person approves on this site's page (`our_page`), signing in at the
/// provider as `username`; the callback's answer (its status and page).
pub async fn approve_device(browser: &reqwest::Client, our_page: &str, username: &str) -> (StatusCode, String) {
    let (_, code) = device_page(browser, our_page).await;
    let site = our_page.split("/auth/device").next().unwrap();
    let resp = browser
        .post(format!("{site}/auth/device/approve"))
        .header("origin", site)
        .form(&[("user_code", code.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "on to the provider");
    let authorize = location(&resp);
    assert!(authorize.contains("prompt=login"), "an approval signs in anew: {authorize}");
    let callback = follow_provider(browser, authorize, username).await;
    let answered = browser.get(&callback).send().await.unwrap();
    (answered.status(), answered.text().await.unwrap())
}

async fn poll(app: &TestApp, device_code: &str) -> reqwest::Response {
    app.post(None, "/v1/auth/device/token", serde_json::json!({"device_code": device_code, "device": "test-host"}))
        .await
}

#[tokio::test]
async fn a_device_signs_in_through_the_university_and_gets_a_personal_token() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let resp = app.post(None, "/v1/auth/device?device=kims-laptop", serde_json::json!({})).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let start: Value = resp.json().await.unwrap();
    for field in ["device_code", "user_code", "verification_uri", "verification_uri_complete"] {
        assert!(start[field].is_string(), "{field} in {start}");
    }
    // D1: the person lands on this site's page first, which says what
    // asked, from where, with the code, before the provider's approval
    let ours = start["verification_uri_complete"].as_str().unwrap();
    assert!(ours.starts_with(&format!("{}/auth/device?user_code=", app.base)), "{ours}");
    assert_eq!(start["verification_uri"], format!("{}/auth/device", app.base));
    let (page, code_in_form) = device_page(&browser(), ours).await;
    assert!(page.contains("kims-laptop") && page.contains("127.0.0.1"), "{page}");
    assert_eq!(code_in_form, start["user_code"].as_str().unwrap());
    // the code as a person types it finds the same request
    let typed = start["user_code"].as_str().unwrap().to_lowercase().replace('-', "");
    let (_, same) = device_page(&browser(), &app.url(&format!("/auth/device?user_code={typed}"))).await;
    assert_eq!(same, code_in_form);
    let unknown = browser().get(app.url("/auth/device?user_code=NOPE-NOPE")).send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    // without a code: a field to type the one the device shows
    let form = browser().get(app.url("/auth/device")).send().await.unwrap().text().await.unwrap();
    assert!(form.contains("name=\"user_code\""), "{form}");
    // the name shown is a host name's characters only: no markup, no quote
    // to end the sentence early with an address of its own choosing
    for (asked, shown) in [("%3Cscript%3Ex", "scriptx"), ("lab-pc%E2%80%9D%20at%2010.0.0.7", "lab-pcat10.0.0.7")] {
        let path = format!("/v1/auth/device?device={asked}");
        let sly: Value = app.post(None, &path, serde_json::json!({})).await.json().await.unwrap();
        let (page, _) = device_page(&browser(), sly["verification_uri_complete"].as_str().unwrap()).await;
        assert!(page.contains(&format!("“{shown}”")) && !page.contains("<script>x"), "{page}");
    }
    assert!(start["interval"].as_u64().unwrap() >= 1 && start["expires_in"].as_u64().unwrap() > 0);
    let code = start["device_code"].as_str().unwrap();
    assert_error(poll(&app, code).await, StatusCode::PRECONDITION_REQUIRED, "AUTHORIZATION_PENDING").await;

    let approver = browser();
    let (status, said) = approve_device(&approver, start["verification_uri_complete"].as_str().unwrap(), "kim").await;
    assert_eq!(status, StatusCode::OK, "{said}");
    assert!(said.contains("kims-laptop"), "{said}");
    // the device gets the token; the approving browser is not signed in
    assert_eq!(me(&app, &approver).await.status(), StatusCode::UNAUTHORIZED);
    let resp = poll(&app, code).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let token: Value = resp.json().await.unwrap();
    let token = token["token"].as_str().unwrap();
    let who: Value = app.me(Some(token)).await.json().await.unwrap();
    assert_eq!((who["username"].as_str(), who["auth"].as_str()), (Some("kim"), Some("oidc")));
    let listed = app.get(Some(token), "/v1/auth/tokens").await.text().await.unwrap();
    // named as its approval page showed it, whatever the poll says
    assert!(listed.contains("jpu login --sso on kims-laptop"), "{listed}");
    // a code serves once; a made-up one never
    assert_error(poll(&app, code).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    assert_error(poll(&app, "made-up").await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;

    // the campus rules hold here too: no lab group, no approval
    let start: Value = app.post(None, "/v1/auth/device", serde_json::json!({})).await.json().await.unwrap();
    let (status, said) = approve_device(&browser(), start["verification_uri_complete"].as_str().unwrap(), "choi").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{said}");
    let still = poll(&app, start["device_code"].as_str().unwrap()).await;
    assert_error(still, StatusCode::PRECONDITION_REQUIRED, "AUTHORIZATION_PENDING").await;
}

/// D1: a device is approved only from this site's page, by someone who
/// signs in anew at the university for it; another site cannot post the
/// approval (and ride on the person's session at the provider), an
/// answered request takes no second answer, and a declined one gets
/// nothing.
#[tokio::test]
async fn a_device_is_approved_only_from_this_sites_page_and_can_be_declined() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let start: Value = app.post(None, "/v1/auth/device?device=box", serde_json::json!({})).await.json().await.unwrap();
    let code = start["user_code"].as_str().unwrap();
    let form = [("user_code", code)];
    for origin in [Some("http://evil.example"), Some("null"), None] {
        let mut request = browser().post(app.url("/auth/device/approve")).form(&form);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        let resp = request.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "approval from {origin:?}");
        let resp = browser().post(app.url("/auth/device/deny")).form(&form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "denial from another site");
    }
    let unknown = browser()
        .post(app.url("/auth/device/approve"))
        .header("origin", &app.base)
        .form(&[("user_code", "BCDF-GHJK")])
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    // declined on its page: the device gets nothing, and no approval after
    let denied = browser().post(app.url("/auth/device/deny")).header("origin", &app.base).form(&form).send().await;
    let denied = denied.unwrap();
    assert_eq!(denied.status(), StatusCode::OK);
    assert!(denied.text().await.unwrap().contains("box"));
    let late = browser().post(app.url("/auth/device/approve")).header("origin", &app.base).form(&form).send().await;
    assert_eq!(late.unwrap().status(), StatusCode::NOT_FOUND, "answered already");
    let refused = poll(&app, start["device_code"].as_str().unwrap()).await;
    assert_error(refused, StatusCode::FORBIDDEN, "FORBIDDEN").await;
    // one approval each: the same page approved twice takes the first
    let start: Value = app.post(None, "/v1/auth/device", serde_json::json!({})).await.json().await.unwrap();
    let page = start["verification_uri_complete"].as_str().unwrap();
    let (first, second) = (browser(), browser());
    let (_, code) = device_page(&first, page).await;
    let go = |b: reqwest::Client| {
        let (site, code) = (app.base.clone(), code.clone());
        async move {
            let resp = b
                .post(format!("{site}/auth/device/approve"))
                .header("origin", &site)
                .form(&[("user_code", code.as_str())])
                .send()
                .await
                .unwrap();
            location(&resp)
        }
    };
    let (a, b) = (go(first.clone()).await, go(second.clone()).await);
    let cb_a = follow_provider(&first, a, "kim").await;
    let cb_b = follow_provider(&second, b, "lee").await;
    assert_eq!(first.get(&cb_a).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(second.get(&cb_b).send().await.unwrap().status(), StatusCode::NOT_FOUND, "answered already");
    let token: Value = poll(&app, start["device_code"].as_str().unwrap()).await.json().await.unwrap();
    let who: Value = app.me(token["token"].as_str()).await.json().await.unwrap();
    assert_eq!(who["username"], "kim", "the first approver's");
}

/// D1: one address starts at most its minute's worth of device sign-ins.
#[tokio::test]
async fn an_address_starts_a_bounded_number_of_device_sign_ins() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    for i in 0..jpu_share::auth::starts::PER_MINUTE {
        let resp = app.post(None, "/v1/auth/device", serde_json::json!({})).await;
        assert_eq!(resp.status(), StatusCode::OK, "start {}", i + 1);
    }
    let over = app.post(None, "/v1/auth/device", serde_json::json!({})).await;
    assert_error(over, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
    // and the browser's way in shares the count
    let resp = browser().get(app.url("/auth/oidc/login")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// Sign-ins that are finished give their start back: a lab behind one
/// address signing in together is not held back by the start limit.
#[tokio::test]
async fn finished_sign_ins_do_not_count_against_the_start_limit() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    for i in 0..(jpu_share::auth::starts::PER_MINUTE + 5) {
        let b = browser();
        let callback = through_provider(&app, &b, "kim", "/").await;
        assert_eq!(b.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER, "sign-in {}", i + 1);
    }
}

#[tokio::test]
async fn without_university_sign_in_the_device_endpoints_say_so() {
    let app = TestApp::spawn().await;
    assert_error(app.post(None, "/v1/auth/device", serde_json::json!({})).await, StatusCode::NOT_FOUND, "NOT_FOUND")
        .await;
    assert_error(poll(&app, "x").await, StatusCode::NOT_FOUND, "NOT_FOUND").await;
}

#[tokio::test]
async fn jpu_login_sso_waits_for_the_person_and_keeps_the_token() {
    let Some(provider) = provider().await else { return };
    let app = server(&provider, |_| {}).await;
    let config = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_jpu"))
        .args(["login", "--server", &app.base, "--sso"])
        .env("JPU_CONFIG_DIR", config.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().expect("instructions");
    let url = first.strip_prefix("Open ").expect("the address first").to_string();
    let (status, said) = approve_device(&browser(), &url, "lee").await;
    assert_eq!(status, StatusCode::OK, "{said}");
    let out =
        tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("as lee through the university"));
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(config.path().join("config.json")).unwrap()).unwrap();
    let who: Value = app.me(stored["token"].as_str()).await.json().await.unwrap();
    assert_eq!(who["username"], "lee");
}

/// I3: without a directory the provider is asked again, with the refresh
/// token it gave at sign-in. Someone it drops loses their sessions,
/// tokens and waiting jobs; someone whose admin group goes is demoted;
/// everyone else goes on through several rounds (a rotated grant kept).
#[tokio::test]
async fn without_a_directory_the_provider_is_asked_again_and_whom_it_drops_is_off_boarded() {
    if provider().await.is_none() {
        return;
    }
    let people_dir = tempfile::tempdir().unwrap();
    let people = people_dir.path().join("people.json");
    let everyone = serde_json::json!({
        "kim": {"groups": ["gpu-lab-vision"]},
        "park": {"groups": ["gpu-lab-vision", "gpu-admins"]},
        "lee": {"groups": ["gpu-lab-nlp"]},
    });
    std::fs::write(&people, everyone.to_string()).unwrap();
    let provider = Provider::with_accounts(&people).await;
    let app = server(&provider, |s| s.auth.oidc.recheck_seconds = 1).await;
    let admin = app.admin_token().await;
    for node in ["node-4090", "node-3080"] {
        let resp = app.post(Some(&admin), &format!("/v1/admin/nodes/{node}/drain"), serde_json::json!({})).await;
        assert!(resp.status().is_success(), "{node} drains");
    }
    let (kim_browser, kim) = signed_in_with_token(&app, "kim").await;
    let (_, park) = signed_in_with_token(&app, "park").await;
    let (_, lee) = signed_in_with_token(&app, "lee").await;
    let who: Value = app.me(Some(&park)).await.json().await.unwrap();
    assert_eq!(who["role"], "admin");
    let waiting = app.submit_ok(&kim, serde_json::json!({"name": "waits", "command": "true", "num_gpus": 1})).await;

    // kim leaves the university; park is no longer an admin
    let after = serde_json::json!({
        "park": {"groups": ["gpu-lab-vision"]},
        "lee": {"groups": ["gpu-lab-nlp"]},
    });
    std::fs::write(&people, after.to_string()).unwrap();
    app.wait_until("kim's token to end", || async { app.me(Some(&kim)).await.status() == StatusCode::UNAUTHORIZED })
        .await;
    assert_eq!(me(&app, &kim_browser).await.status(), StatusCode::UNAUTHORIZED, "kim's session ended too");
    let job: Value = app.get(Some(&admin), &format!("/v1/jobs/{}", waiting["id"])).await.json().await.unwrap();
    assert_eq!((job["state"].as_str(), job["end_reason"].as_str()), (Some("CANCELLED"), Some("OWNER_LEFT")), "{job}");
    app.wait_until("park to be demoted", || async {
        let who: Value = app.me(Some(&park)).await.json().await.unwrap();
        who["role"] == "researcher"
    })
    .await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("the university no longer vouches for them"), "{audit}");
    // kim is not asked about again (nor counted in a later round's share)
    let ended = "SELECT CAST(COUNT(*) AS REAL) FROM campus_identities c JOIN users u ON u.id = c.user_id \
                 WHERE u.username = 'kim' AND c.refresh_token = ''";
    assert_eq!(app.sql_number(ended).await, 1.0);
    // lee, still vouched for, goes on (a round at least after kim's)
    assert_eq!(app.me(Some(&lee)).await.status(), StatusCode::OK, "lee stays");
    let who: Value = app.me(Some(&lee)).await.json().await.unwrap();
    assert_eq!((who["lab"].as_str(), who["role"].as_str()), (Some("nlp"), Some("researcher")));
}

/// I3: while the provider is asked again, a sign-in that brings no refresh
/// token is refused (it could never be asked about: a sign-in stripped of
/// `offline_access` kept its access after the person left); with the
/// re-check off it is let in. An account with no refresh token kept (made
/// before they were) has its sessions and tokens ended, and signs in again.
#[tokio::test]
async fn a_campus_account_the_provider_cannot_be_asked_about_does_not_keep_access() {
    if provider().await.is_none() {
        return;
    }
    let stingy = Provider::without_refresh_tokens().await;
    let app = server(&stingy, |s| s.auth.oidc.recheck_seconds = 3600).await;
    let b = browser();
    let callback = through_provider(&app, &b, "kim", "/").await;
    let refused = b.get(&callback).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.text().await.unwrap().contains("no refresh token"));
    let off = server(&stingy, |s| s.auth.oidc.recheck_seconds = 0).await;
    let b = browser();
    let callback = through_provider(&off, &b, "kim", "/").await;
    assert_eq!(b.get(&callback).send().await.unwrap().status(), StatusCode::SEE_OTHER, "let in with the re-check off");

    let provider = Provider::start().await;
    let app = server(&provider, |s| s.auth.oidc.recheck_seconds = 1).await;
    let (_, kim) = signed_in_with_token(&app, "kim").await;
    let (_, lee) = signed_in_with_token(&app, "lee").await;
    // as an account from before refresh tokens were kept
    app.sql("UPDATE campus_identities SET refresh_token = NULL WHERE user_id = (SELECT id FROM users WHERE username = 'kim')")
        .await;
    app.wait_until("kim's token to end", || async { app.me(Some(&kim)).await.status() == StatusCode::UNAUTHORIZED })
        .await;
    assert_eq!(app.me(Some(&lee)).await.status(), StatusCode::OK, "lee's grant is kept: lee stays");
    let admin = app.admin_token().await;
    let audit = app.get(Some(&admin), "/v1/admin/audit").await.text().await.unwrap();
    assert!(audit.contains("no refresh token to re-check them with"), "{audit}");
    // signing in again brings a grant, and access back
    let (_, again) = signed_in_with_token(&app, "kim").await;
    assert_eq!(app.me(Some(&again)).await.status(), StatusCode::OK);
}
