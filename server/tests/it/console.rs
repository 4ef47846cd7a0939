//! The console over plain HTTP: sign-in gate, session cookie, dashboard.

use crate::helpers::*;
use reqwest::StatusCode;

fn location(resp: &reqwest::Response) -> &str {
    resp.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("")
}

#[tokio::test]
async fn anonymous_pages_redirect_to_login_which_renders_a_form() {
    let app = TestApp::spawn().await;
    let resp = app.page("/").await;
    assert!(resp.status().is_redirection());
    assert_eq!(location(&resp), "/login");
    let login = app.page("/login").await;
    assert_eq!(login.status(), StatusCode::OK);
    let html = login.text().await.unwrap();
    assert!(html.contains(r#"action="/login""#) && html.contains(r#"for="password""#), "{html}");
}

#[tokio::test]
async fn sign_in_sets_a_safe_cookie_and_shows_the_cluster() {
    let app = TestApp::spawn().await;
    let wrong = app.console_login("admin", "nope").await;
    assert_eq!(location(&wrong), "/login?error=credentials");

    let resp = app.console_login("admin", ADMIN_PASSWORD).await;
    assert_eq!(location(&resp), "/");
    let cookie = resp.headers().get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Lax"), "{cookie}");

    let dash = app.page("/").await;
    assert_eq!(dash.status(), StatusCode::OK);
    let html = dash.text().await.unwrap();
    for expected in ["node-4090", "node-3080", "RTX 4090", "RTX 3080 Ti", "admin"] {
        assert!(html.contains(expected), "dashboard lacks {expected}");
    }
    // the session also authenticates /v1
    assert_eq!(app.me(None).await.status(), StatusCode::OK);

    app.console_logout().await;
    assert_eq!(location(&app.page("/").await), "/login");
    assert_eq!(app.me(None).await.status(), StatusCode::UNAUTHORIZED);
}

/// Served over https (`secure_cookies`), the session cookie is
/// `__Host-`: Secure, this host only, path `/` — a sibling subdomain or a
/// script cannot plant one of its own before it.
#[tokio::test]
async fn over_https_the_session_cookie_is_the_hosts_alone() {
    let app = TestApp::spawn_local_with(|s| s.server.secure_cookies = true).await;
    let resp = app.console_login("demo", DEMO_PASSWORD).await;
    let cookie = resp.headers().get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.starts_with("__Host-jpu_session="), "{cookie}");
    assert!(cookie.contains("Secure") && cookie.contains("Path=/") && !cookie.contains("Domain"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_string();
    let me = client().get(app.url("/v1/me")).header("cookie", &pair).send().await.unwrap();
    assert_eq!(me.status(), StatusCode::OK, "the session works by that name");
    let plain = pair.replacen("__Host-", "", 1);
    let me = client().get(app.url("/v1/me")).header("cookie", &plain).send().await.unwrap();
    assert_eq!(me.status(), StatusCode::UNAUTHORIZED, "and by no other");
}

#[tokio::test]
async fn signing_in_again_rotates_the_session_id_and_kills_the_old_one() {
    let app = TestApp::spawn().await;
    let cookie_of = |resp: &reqwest::Response| {
        let raw = resp.headers().get("set-cookie").expect("cookie set").to_str().unwrap().to_string();
        raw.split(';').next().unwrap().to_string()
    };
    let first = cookie_of(&app.console_login("demo", DEMO_PASSWORD).await);
    let second = cookie_of(&app.console_login("demo", DEMO_PASSWORD).await);
    assert_ne!(first, second, "a new id at every sign-in");
    let replay = client().get(app.url("/v1/me")).header("cookie", &first).send().await.unwrap();
    assert_eq!(replay.status(), StatusCode::UNAUTHORIZED, "the old id is dead");
    let current = client().get(app.url("/v1/me")).header("cookie", &second).send().await.unwrap();
    assert_eq!(current.status(), StatusCode::OK);
}

/// The console's server functions answer with the api.md code, not only
/// words: a page can tell a job that can never fit from a user over the
/// unfinished-jobs limit.
#[tokio::test]
async fn console_errors_keep_their_api_code() {
    use leptos::server_fn::ServerFn;
    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    settings.scheduler.max_unfinished_per_user = 1;
    let app = TestApp::spawn_with(dir, settings).await;
    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let browser = &app.client;
    let submit = |num_gpus: &'static str| {
        browser
            .post(app.url(app::api::SubmitJob::PATH))
            .header("origin", &app.base)
            .form(&[
                ("name", "n"),
                ("command", "true"),
                ("num_gpus", num_gpus),
                ("time_limit_minutes", ""),
                ("env", ""),
            ])
            .send()
    };
    let vram = |gb: &'static str| {
        browser
            .post(app.url(app::api::SubmitJob::PATH))
            .header("origin", &app.base)
            .form(&[
                ("name", "n"),
                ("command", "true"),
                ("num_gpus", "1"),
                ("time_limit_minutes", ""),
                ("env", ""),
                ("min_vram_gb", gb),
            ])
            .send()
    };
    let too_much: serde_json::Value = vram("25").await.unwrap().json().await.unwrap();
    assert_eq!(too_much["code"], "NO_FIT_PLACEMENT", "{too_much}");
    let not_a_number: serde_json::Value = vram("lots").await.unwrap().json().await.unwrap();
    assert_eq!(not_a_number["code"], "VALIDATION", "{not_a_number}");
    assert!(not_a_number["message"].as_str().unwrap().starts_with("min_vram_gb:"), "{not_a_number}");
    let never = submit("8").await.unwrap();
    assert_eq!(never.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let error: serde_json::Value = never.json().await.unwrap();
    assert_eq!(error["code"], "NO_FIT_PLACEMENT", "{error}");
    assert!(error["message"].as_str().unwrap().contains("8 GPU"), "{error}");
    assert!(submit("1").await.unwrap().status().is_success());
    let over = submit("1").await.unwrap();
    assert_eq!(over.status(), StatusCode::TOO_MANY_REQUESTS);
    let error: serde_json::Value = over.json().await.unwrap();
    assert_eq!(error["code"], "QUEUE_LIMIT", "{error}");
}

/// The Policy page is published to anyone and every figure on it follows
/// the deployment: an admin's tier change, the cancel grace and the policy
/// in force, the maintenance phase.
#[tokio::test]
async fn the_policy_page_is_public_and_follows_the_running_configuration() {
    let app = TestApp::spawn().await;
    let page = app.page("/policy").await;
    assert_eq!(page.status(), StatusCode::OK, "readable signed out");
    let html = page.text().await.unwrap();
    for expected in [
        "RTX 4090",
        "Every 5 seconds",
        "Usage halves every 7 days",
        "at most 2 jobs at once",
        "at most 100 unfinished jobs",
        "CUDA out of memory",
        "RTX 3080 Ti (12 GB) → RTX 4090 (24 GB)",
        "seed policy",
        "Now: normal operation.",
        r#"href="/login""#,
    ] {
        assert!(html.contains(expected), "policy page lacks {expected:?}");
    }
    // the worked example is computed from the best tier's TFLOPS (82.6)
    assert!(html.contains("= 297,360 TFLOP·s") && html.contains("297,360 + 49,560 = 346,920"), "{html}");

    let admin = app.admin_token().await;
    let patch = app.patch(&admin, "/v1/admin/tiers/rtx4090", serde_json::json!({"tflops": 100.0})).await;
    assert_eq!(patch.status(), StatusCode::OK);
    let start = app
        .post(Some(&admin), "/v1/admin/maintenance", serde_json::json!({"action": "start", "message": "disk"}))
        .await;
    assert!(start.status().is_success(), "{}", start.status());
    let html = app.page("/policy").await.text().await.unwrap();
    assert!(html.contains("= 360,000 TFLOP·s") && html.contains("360,000 + 60,000 = 420,000"), "tier change not shown");
    assert!(!html.contains("Now: normal operation.") && html.contains("Now: "), "maintenance not shown");

    // signed in, the page says the viewer's own limit
    app.sql("UPDATE users SET max_concurrent = 5 WHERE username = 'demo'").await;
    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let html = app.page("/policy").await.text().await.unwrap();
    assert!(html.contains("Yours is 5."), "own limit not shown");

    let dir = tempfile::tempdir().unwrap();
    let mut settings = test_settings(dir.path());
    settings.cancel.grace_seconds = 45;
    settings.scheduler.policy = jpu_share::config::PolicyName::Planned;
    settings.scheduler.max_wait_hours = 12;
    settings.scheduler.plan_predicted_ends = true;
    settings.backfill.enabled = true;
    settings.backfill.min_idle_seconds = 90;
    let other = TestApp::spawn_with(dir, settings).await;
    let html = other.page("/policy").await.text().await.unwrap();
    for expected in [
        "waits 45 seconds",
        "planned policy",
        "over 12 hours",
        "never go ahead of light labs",
        "charged to that job",
        "expected to end",
        "idle for 90 seconds",
    ] {
        assert!(html.contains(expected), "policy page lacks {expected:?}");
    }
    assert!(!html.contains("seed policy"));
}

/// The console speaks Korean or English: the browser's language first,
/// a switch that is kept (cookie; for a signed-in person, their account,
/// so another browser follows), never a redirect off the site.
#[tokio::test]
async fn the_console_speaks_the_readers_language_and_keeps_their_choice() {
    let app = TestApp::spawn().await;
    let anonymous = client();
    let get = |lang: &'static str, cookie: Option<&'static str>| {
        let mut req = anonymous.get(app.url("/policy")).header("accept-language", lang);
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let ko = get("ko-KR,ko;q=0.9,en;q=0.8", None).await;
    assert!(ko.contains(r#"<html lang="ko""#), "html lang");
    assert!(
        ko.contains("GPU 공유 방식") && ko.contains("공정성 정책 (Fair-share)") && ko.contains("5초마다"),
        "Korean page"
    );
    assert!(ko.contains("297,360 + 49,560 = 346,920 TFLOP·s"), "the live figures in Korean too");
    assert!(!ko.contains("How GPUs are shared"));
    let en = get("en-US,en;q=0.9", None).await;
    assert!(en.contains(r#"<html lang="en""#) && en.contains("How GPUs are shared"));
    assert!(get("ko", Some("jpu_lang=en")).await.contains("How GPUs are shared"), "the cookie beats the browser");

    // the switch keeps the choice and goes back where it came from
    let switch = anonymous.get(app.url("/lang/ko?back=%2Fpolicy%23oom")).send().await.unwrap();
    assert_eq!(switch.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&switch), "/policy#oom");
    let cookie = switch.headers().get("set-cookie").unwrap().to_str().unwrap();
    assert!(cookie.starts_with("jpu_lang=ko;") && cookie.contains("Max-Age="), "{cookie}");
    for evil in ["//evil.example", "https://evil.example", "/%5Cevil.example"] {
        let resp = anonymous.get(app.url(&format!("/lang/ko?back={evil}"))).send().await.unwrap();
        assert_eq!(location(&resp), "/", "{evil}");
    }
    assert_eq!(anonymous.get(app.url("/lang/fr")).send().await.unwrap().status(), StatusCode::NOT_FOUND);

    // signed in, the choice is kept with the account: a browser without
    // the cookie, asking for English, still gets Korean
    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.page("/lang/ko?back=%2F").await.status(), StatusCode::SEE_OTHER);
    let stored =
        app.sql_number("SELECT CAST(COUNT(*) AS REAL) FROM users WHERE username = 'demo' AND locale = 'ko'").await;
    assert_eq!(stored, 1.0);
    let other = client();
    let login = app.console_login_as(&other, "demo", DEMO_PASSWORD).await;
    let session = login.headers().get("set-cookie").unwrap().to_str().unwrap().split(';').next().unwrap().to_string();
    let html = other
        .get(app.url("/"))
        .header("cookie", &session)
        .header("accept-language", "en")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(r#"<html lang="ko""#) && html.contains("대시보드"), "the account's choice");
}

/// The job page's summary, refreshed as HTML rendered on the server: only
/// for those who may see the job, in the reader's language, its text
/// escaped.
#[tokio::test]
async fn the_job_summary_refreshes_as_escaped_html_for_those_who_may_see_it() {
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    let job = app
        .post(Some(&token), "/v1/jobs", serde_json::json!({"name": "<b>bold</b>", "command": "true", "num_gpus": 1}))
        .await;
    let id = job.json::<serde_json::Value>().await.unwrap()["id"].as_i64().unwrap();
    let panel = |client: &reqwest::Client| {
        client
            .post(app.url(app::pages::jobs::JobPanel::PATH))
            .header("origin", &app.base)
            .form(&[("id", id.to_string())])
            .send()
    };
    let admin = app.admin_token().await;
    app.researcher(&admin, "colleague", "demo-lab").await;
    app.researcher(&admin, "stranger", "other-lab").await;
    let anonymous = crate::helpers::client();
    assert_eq!(panel(&anonymous).await.unwrap().status(), StatusCode::UNAUTHORIZED);

    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let resp = panel(&app.client).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let html: String = resp.json().await.unwrap();
    assert!(html.contains(r#"data-testid="state""#) && html.contains("Job #"), "{html}");
    assert!(html.contains("&lt;b&gt;bold&lt;/b&gt;") && !html.contains("<b>bold"), "the name is escaped: {html}");

    // a lab colleague who reads Korean gets it in Korean; another lab's
    // researcher does not get it at all
    let colleague = crate::helpers::client();
    assert_eq!(
        app.console_login_as(&colleague, "colleague", "colleague-password").await.status(),
        StatusCode::SEE_OTHER
    );
    let _ = colleague.get(app.url("/lang/ko?back=/")).send().await.unwrap();
    let ko = panel(&colleague).await.unwrap().json::<String>().await.unwrap();
    assert!(ko.contains("작업 #") && ko.contains("상태"), "{ko}");
    let stranger = crate::helpers::client();
    assert_eq!(app.console_login_as(&stranger, "stranger", "stranger-password").await.status(), StatusCode::SEE_OTHER);
    assert_eq!(panel(&stranger).await.unwrap().status(), StatusCode::NOT_FOUND, "another lab's job is not there");
}

/// Every admin form posts one server function that names the form; a
/// researcher is refused, an unknown form is the caller's mistake.
#[tokio::test]
async fn the_admin_forms_server_function_checks_the_role_and_the_form() {
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn().await;
    let path = app::api::admin::AdminForm::PATH;
    let admin = app.admin_token().await;
    let post = |client: &reqwest::Client, fields: &'static [(&'static str, &'static str)]| {
        client.post(app.url(path)).header("origin", &app.base).form(fields).send()
    };
    let researcher = crate::helpers::client();
    assert_eq!(app.console_login_as(&researcher, "demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let resp = post(&researcher, &[("form", "create_lab"), ("name", "lab-r")]).await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);

    assert_eq!(app.console_login("admin", ADMIN_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let resp = post(&app.client, &[("form", "create_lab"), ("name", "lab-a")]).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{:?}", resp.text().await);
    let labs = app.get(Some(&admin), "/v1/labs").await.text().await.unwrap();
    assert!(labs.contains("\"lab-a\""), "{labs}");
    let resp = post(&app.client, &[("form", "no_such_form")]).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // a form's missing field is the form's own error, never a 500
    let resp = post(&app.client, &[("form", "create_tier"), ("name", "t1")]).await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
}

/// A refused input reads in the reader's language in the console, with
/// its api.md code, and the same refusal stays English on /v1; every
/// message key the server writes exists in both languages.
#[tokio::test]
async fn refusals_read_in_the_readers_language_and_keep_their_code() {
    use leptos::server_fn::ServerFn;
    let app = TestApp::spawn().await;
    let token = app.demo_token().await;
    let submit = |client: &reqwest::Client, fields: Vec<(&'static str, &'static str)>| {
        client.post(app.url(app::api::jobs::SubmitJob::PATH)).header("origin", &app.base).form(&fields).send()
    };
    let form = |gpus: &'static str, env: &'static str, after: &'static str| {
        vec![
            ("name", "x"),
            ("command", "true"),
            ("num_gpus", gpus),
            ("time_limit_minutes", ""),
            ("env", env),
            ("after", after),
        ]
    };
    let korean = crate::helpers::client();
    assert_eq!(app.console_login_as(&korean, "demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let _ = korean.get(app.url("/lang/ko?back=/")).send().await.unwrap();
    let table = [
        (form("9", "", ""), 422, "VALIDATION", "num_gpus: 1에서 8 사이여야 합니다 (받은 값: 9)"),
        (form("1", "JOB_ID=1", ""), 422, "VALIDATION", "env: `JOB_ID`은(는) JPU-Share가 정하는 값이라"),
        (form("1", "oops", ""), 422, "VALIDATION", "env 1번째 줄: KEY=value 형식으로 쓰세요"),
        (form("two", "", ""), 422, "VALIDATION", "num_gpus: `two`은(는) 숫자가 아닙니다"),
        (form("1", "", "soon:1"), 422, "VALIDATION", "dependencies: `soon`은(는) ok, any, notok 중 하나가 아닙니다"),
        (form("1", "", "ok:999999"), 404, "NOT_FOUND", "dependencies: 작업 999999은(는) 없습니다"),
    ];
    for (fields, status, code, says) in table {
        let resp = submit(&korean, fields).await.unwrap();
        assert_eq!(resp.status().as_u16(), status, "{says}");
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["code"], code, "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    // the same refusals on /v1 stay in English, whatever the browser says
    let resp = app
        .client
        .post(app.url("/v1/jobs"))
        .bearer_auth(&token)
        .header("accept-language", "ko")
        .json(&serde_json::json!({"name": "x", "command": "true", "num_gpus": 9}))
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["message"], "num_gpus: must be between 1 and 8, got 9", "{body}");
    // not signed in: the console says so in the browser's language
    let anonymous = crate::helpers::client();
    let resp = anonymous
        .post(app.url(app::api::jobs::SubmitJob::PATH))
        .header("origin", &app.base)
        .header("accept-language", "ko-KR")
        .form(&form("1", "", ""))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert!(resp.text().await.unwrap().contains("로그인하세요"));
}

/// Every `msg!("…")` key the server and the console write is in both
/// languages: a refusal can never show its key instead of its words.
#[test]
fn every_message_key_the_server_writes_exists_in_both_languages() {
    let mut keys = Vec::new();
    for root in [concat!(env!("CARGO_MANIFEST_DIR"), "/src"), concat!(env!("CARGO_MANIFEST_DIR"), "/../app/src")] {
        for (_, text) in app::i18n::source_texts(std::path::Path::new(root)) {
            for (i, _) in text.match_indices("msg!(\"") {
                keys.push(text[i + 6..].split('"').next().unwrap_or("").to_string());
            }
        }
    }
    assert!(keys.len() > 150, "found {} keys", keys.len());
    let missing = app::i18n::missing_keys(&keys);
    assert!(missing.is_empty(), "message keys missing: {missing:?}");
}

/// Every page names itself in its `<title>`, before the site's name:
/// browser tabs and screen readers can tell them apart (#42 nits).
#[tokio::test]
async fn every_page_names_itself_in_its_title() {
    let app = TestApp::spawn().await;
    assert_eq!(app.console_login("admin", crate::helpers::ADMIN_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let mut titles = Vec::new();
    for (path, name) in [
        ("/", "Dashboard"),
        ("/queue", "Queue"),
        ("/jobs", "Jobs"),
        ("/submit", "Submit"),
        ("/usage", "Lab usage"),
        ("/policy", "Policy"),
        ("/account", "Account"),
        ("/admin", "Admin"),
        ("/admin/cluster", "Tiers"),
        ("/admin/people", "Labs"),
        ("/admin/backfill", "backfill"),
    ] {
        let html = app.page(path).await.text().await.unwrap_or_else(|e| panic!("{path}: {e:?}"));
        let title = html.split("<title>").nth(1).and_then(|t| t.split("</title>").next()).unwrap_or_default();
        assert!(title.contains(name) && title.ends_with("JPU-Share"), "{path}: {title:?}");
        titles.push(title.to_string());
    }
    let mut distinct = titles.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), titles.len(), "{titles:?}");
}

/// #43: the account page shows the person's home and lab share, what
/// they hold and their quotas (over one, it says new jobs are refused).
#[tokio::test]
async fn the_account_page_shows_the_places_and_their_quotas() {
    let app = TestApp::spawn_local_with(|s| s.storage.home_quota_gb = 2.5).await;
    app.console_login("demo", DEMO_PASSWORD).await;
    let html = app.page("/account").await.text().await.unwrap();
    assert!(html.contains(r#"data-testid="storage""#), "{html}");
    let home = html.split(r#"data-testid="storage-home""#).nth(1).unwrap_or_default();
    assert!(home.contains("/home/demo") && home.contains("2.50 GB"), "{home}");
    let lab = html.split(r#"data-testid="storage-lab""#).nth(1).unwrap_or_default();
    assert!(lab.contains("/labs/demo-lab") && lab.contains("1000.00 GB"), "{lab}");
    assert!(!html.contains("over its quota"), "nothing over its quota yet");
}

/// #43: the Files page lists a folder of the home (with each file's
/// download link and delete button, and the upload zone), walks into a
/// folder, and shows a dataset's files read-only; the Datasets page has
/// the request form, and the admin's page the forms to register and
/// decide.
#[tokio::test]
async fn the_files_and_datasets_pages_show_what_the_api_holds() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let app = TestApp::spawn_local_with(|s| s.executor.uid_range = "3102500-3102599".into()).await;
    let demo = app.demo_token().await;
    let admin = app.admin_token().await;
    let put = |path: &str, body: &'static str| {
        app.client.put(app.url(&format!("/v1/files/{path}"))).bearer_auth(&demo).body(body).send()
    };
    let made = app.client.post(app.url("/v1/files/home/runs?mkdir")).bearer_auth(&demo).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    assert_eq!(put("home/runs/loss curve.csv", "1,2").await.unwrap().status(), StatusCode::CREATED);
    let ds = app
        .post(
            Some(&admin),
            "/v1/admin/datasets",
            serde_json::json!({"name": "docs", "source": {"path": "/usr/share/doc"}}),
        )
        .await;
    assert_eq!(ds.status(), StatusCode::CREATED);

    app.console_login("demo", DEMO_PASSWORD).await;
    let top = app.page("/files").await.text().await.unwrap();
    assert!(top.contains(r#"href="/files?place=home&amp;path=runs""#) || top.contains("path=runs"), "{top}");
    assert!(top.contains(r#"data-upload="/v1/files/home/""#) && top.contains("/pkg/files.js"), "{top}");
    let runs = app.page("/files?place=home&path=runs").await.text().await.unwrap();
    assert!(runs.contains(r#"href="/v1/files/home/runs/loss%20curve%2Ecsv""#), "{runs}");
    assert!(runs.contains(r#"data-delete="/v1/files/home/runs/loss%20curve%2Ecsv""#), "{runs}");
    let docs = app.page("/files?place=datasets").await.text().await.unwrap();
    assert!(docs.contains("path=docs") && !docs.contains("data-upload"), "read-only: {docs}");
    let policy = app.page("/policy").await.text().await.unwrap();
    assert!(policy.contains(concat!("JPU-Share ", env!("CARGO_PKG_VERSION"))), "the version in the footer");
    let data = policy.split(r#"data-testid="policy-data""#).nth(1).unwrap_or_default();
    assert!(data.contains("50.0 GB") && data.contains("1000.0 GB"), "this site's quotas: {data}");
    let dashboard = app.page("/").await.text().await.unwrap();
    assert!(dashboard.contains(r#"data-testid="dashboard-storage""#), "usage against quota on the dashboard");
    let page = app.page("/datasets").await.text().await.unwrap();
    assert!(page.contains(r#"data-testid="data-request""#) && page.contains("docs"), "{page}");
    app.console_logout().await;
    app.console_login("admin", crate::helpers::ADMIN_PASSWORD).await;
    let admin_page = app.page("/admin/datasets").await.text().await.unwrap();
    assert!(admin_page.contains(r#"data-testid="register-dataset""#), "{admin_page}");
}
