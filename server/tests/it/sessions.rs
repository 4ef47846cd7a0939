//! Interactive sessions with a real JupyterLab (PyPI, installed by
//! `.ci/install-tools test` where every job's uid can run it), driven
//! through the server's `/s/{id}/` proxy: a kernel over the WebSocket
//! runs code as the job's uid, without network; nobody but the owner
//! reaches it; cancel and idleness end it and close the proxy.
//! `JPU_TEST_JUPYTER=1` (set by `make test`) makes JupyterLab required;
//! without it and without JupyterLab these tests skip.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::cli::jpu;
use crate::helpers::{assert_error, TestApp, DEMO_PASSWORD};
use crate::process::ServerProcess;

const JUPYTER: &str = "/opt/jpu-share/jupyterlab/bin/jupyter-lab";

/// JupyterLab's path, or `None` (skip) when it is absent and not required.
fn jupyter() -> Option<String> {
    let path = std::env::var("JPU_JUPYTER_LAB").unwrap_or_else(|_| JUPYTER.into());
    let required = std::env::var_os("JPU_TEST_JUPYTER").is_some_and(|v| v == "1");
    if !nix::unistd::geteuid().is_root() {
        assert!(!required, "JPU_TEST_JUPYTER is set but the tests do not run as root");
        return None;
    }
    if std::path::Path::new(&path).is_file() {
        Some(path)
    } else {
        assert!(!required, "JPU_TEST_JUPYTER is set but {path} is missing: run .ci/install-tools test");
        eprintln!("no JupyterLab: skipping a session test (make test runs it)");
        None
    }
}

async fn server(first_uid: u32, jupyter: &str, idle_minutes: f64) -> TestApp {
    let jupyter = jupyter.to_string();
    TestApp::spawn_local_with(move |s| {
        s.executor.uid_range = format!("{first_uid}-{}", first_uid + 99);
        s.sessions.apps.get_mut("jupyterlab").expect("the default app").command = jupyter;
        s.sessions.idle_minutes = idle_minutes;
    })
    .await
}

async fn start(app: &TestApp, token: &str) -> i64 {
    let resp = app.post(Some(token), "/v1/sessions", json!({"app": "jupyterlab", "num_gpus": 1})).await;
    assert_eq!(resp.status(), StatusCode::CREATED);
    let job: Value = resp.json().await.unwrap();
    assert_eq!(job["kind"], "session");
    assert_eq!(job["session"]["app"], "jupyterlab");
    job["id"].as_i64().unwrap()
}

async fn wait_ready(app: &TestApp, token: &str, id: i64) -> Value {
    let job = app
        .wait_job(token, id, "the session READY", |j| j["session"]["state"] == "READY" || j["ended_at"].is_string())
        .await;
    assert_eq!(
        job["session"]["state"],
        "READY",
        "{job}\n{}",
        std::fs::read_to_string(app.log_path(id)).unwrap_or_default()
    );
    job
}

/// What every browser asks for, so that the proxy's answers come
/// compressed as they do to browsers (#41: under compression the Slurm
/// path once answered nothing at all).
const BROWSER_ENCODINGS: &str = "gzip, deflate, br, zstd";

async fn through(app: &TestApp, token: Option<&str>, path: &str) -> reqwest::Response {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let mut req = client.get(app.url(path)).header("accept-encoding", BROWSER_ENCODINGS);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    req.send().await.expect("request")
}

/// A response's body as the browser reads it: whole (a cut-off body is
/// an error here) and decoded from what the server compressed it with.
async fn read_text(resp: reqwest::Response) -> String {
    let encoding = resp.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_string());
    let bytes = resp.bytes().await.expect("the whole body");
    crate::helpers::decoded(encoding.as_deref(), &bytes)
}

/// Starts a kernel through the proxy and runs `code` in it over the
/// WebSocket; returns what it printed.
async fn run_in_kernel(app: &TestApp, token: &str, id: i64, code: &str) -> String {
    let client =
        reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    // the page hands out Jupyter's _xsrf cookie, for its path only
    let lab = client
        .get(app.url(&format!("/s/{id}/lab")))
        .header("accept-encoding", BROWSER_ENCODINGS)
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(lab.status(), StatusCode::OK);
    let xsrf = lab
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|c| c.to_str().ok())
        .find_map(|c| c.strip_prefix("_xsrf=").map(|v| v.split(';').next().unwrap().to_string()))
        .expect("Jupyter's _xsrf cookie");
    let started = client
        .post(app.url(&format!("/s/{id}/api/kernels")))
        .bearer_auth(token)
        .header("X-XSRFToken", &xsrf)
        .header("Origin", app.base.clone())
        .header("accept-encoding", BROWSER_ENCODINGS)
        .json(&json!({"name": "python3"}))
        .send()
        .await
        .unwrap();
    let status = started.status();
    let headers = format!("{:?}", started.headers());
    let text = read_text(started).await;
    let kernel: Value = serde_json::from_str(&text).unwrap_or_default();
    let Some(kernel_id) = kernel["id"].as_str().map(str::to_string) else {
        panic!(
            "no kernel: {status} {headers} {text}\n{}",
            std::fs::read_to_string(app.log_path(id)).unwrap_or_default()
        )
    };
    let ws_url = format!("{}/s/{id}/api/kernels/{kernel_id}/channels", app.base.replace("http://", "ws://"));
    let mut request = ws_url.into_client_request().unwrap();
    request.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    request.headers_mut().insert("origin", app.base.parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("the kernel's WebSocket opens");
    // as JupyterLab does: ask the kernel for its info and wait for the
    // answer before running code (an execute sent before the kernel's
    // channels were up was lost once under a full test run, and the cell
    // printed nothing)
    let info_id = format!("info-{id}");
    let mut ready = false;
    for _ in 0..10 {
        let info = json!({
            "header": {"msg_id": info_id, "msg_type": "kernel_info_request", "username": "t", "session": "t",
                       "date": "2026-12-04T00:00:00Z", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [], "content": {}
        });
        socket.send(Message::text(info.to_string())).await.unwrap();
        let replied = tokio::time::timeout(Duration::from_secs(3), async {
            while let Some(Ok(message)) = socket.next().await {
                let Message::Text(text) = message else { continue };
                let m: Value = serde_json::from_str(&text).unwrap_or_default();
                if m["header"]["msg_type"] == "kernel_info_reply" && m["parent_header"]["msg_id"] == info_id.as_str() {
                    return true;
                }
            }
            false
        })
        .await;
        if replied == Ok(true) {
            ready = true;
            break;
        }
    }
    assert!(ready, "the kernel answered kernel_info_request");
    let msg_id = format!("run-{id}");
    let execute = json!({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "t", "session": "t",
                   "date": "2026-12-04T00:00:00Z", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": false, "store_history": false, "user_expressions": {},
                    "allow_stdin": false, "stop_on_error": true}
    });
    socket.send(Message::text(execute.to_string())).await.unwrap();
    let mut printed = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    // the run is over when IOPub says the kernel is idle again: the shell's
    // execute_reply may come before the IOPub stream that carries the
    // output (the channels are not ordered; seen once under a full run on
    // Slurm: an empty output)
    let mut replied = false;
    while Instant::now() < deadline {
        let wait = if replied { Duration::from_secs(5) } else { Duration::from_secs(30) };
        let Ok(Some(Ok(message))) = tokio::time::timeout(wait, socket.next()).await else { break };
        let Message::Text(text) = message else { continue };
        let m: Value = serde_json::from_str(&text).unwrap();
        if m["parent_header"]["msg_id"] != msg_id.as_str() {
            continue;
        }
        match m["header"]["msg_type"].as_str() {
            Some("stream") => printed.push_str(m["content"]["text"].as_str().unwrap_or_default()),
            Some("error") => printed.push_str(&format!("ERROR {}", m["content"]["evalue"])),
            Some("execute_reply") => replied = true,
            Some("status") if m["content"]["execution_state"] == "idle" => break,
            _ => {}
        }
    }
    printed
}

#[tokio::test]
async fn a_notebook_runs_as_its_owner_without_network_reached_only_through_the_proxy() {
    let Some(jupyter) = jupyter() else { return };
    let app = server(3_101_000, &jupyter, 600.0).await;
    let admin = app.admin_token().await;
    let kim = app.researcher(&admin, "kim", "vision").await;
    let colleague = app.researcher(&admin, "lee", "vision").await;
    let stranger = app.researcher(&admin, "park", "nlp").await;

    let id = start(&app, &kim).await;
    let job = wait_ready(&app, &kim, id).await;
    assert_eq!(job["session"]["url"], format!("/s/{id}/"));
    assert!(job["session"]["idle_ends_at"].is_string(), "{job}");

    // the page: JupyterLab, with no secret in its config, held to its path
    let page = through(&app, Some(&kim), &format!("/s/{id}/lab")).await;
    assert_eq!(page.status(), StatusCode::OK);
    let csp: Vec<String> =
        page.headers().get_all("content-security-policy").iter().map(|v| v.to_str().unwrap().to_string()).collect();
    let host = app.base.trim_start_matches("http://");
    assert!(
        csp.iter().any(|p| p.contains(&format!("connect-src http://{host}/s/{id}/ ws://{host}/s/{id}/;"))),
        "{csp:?}"
    );
    assert!(page.headers().contains_key("content-encoding"), "compressed, as for a browser: {:?}", page.headers());
    let html = read_text(page).await;
    assert!(html.contains("JupyterLab") && html.contains(r#""token": """#), "no token in the page's config");

    // a kernel over the WebSocket: the job's uid, loopback, no network
    let code = "import os, socket\nprint('uid', os.getuid())\n\
                try:\n    socket.create_connection(('192.0.2.1', 80), timeout=2)\n    print('NETWORK OPEN')\n\
                except OSError as e:\n    print('no network:', e)\n";
    let printed = run_in_kernel(&app, &kim, id, code).await;
    let uid = app.sql_number("SELECT CAST(allocated_uid AS REAL) FROM users WHERE username = 'kim'").await as u32;
    assert!(printed.contains(&format!("uid {uid}\n")), "the kernel runs as kim's uid {uid}: {printed}");
    assert!(printed.contains("no network:"), "{printed}");

    // a page of another site cannot open the session's sockets
    let foreign = format!("{}/s/{id}/api/events/subscribe", app.base.replace("http://", "ws://"));
    let mut request = foreign.into_client_request().unwrap();
    request.headers_mut().insert("authorization", format!("Bearer {kim}").parse().unwrap());
    request.headers_mut().insert("origin", "http://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), StatusCode::FORBIDDEN),
        other => panic!("a foreign origin's socket: {:?}", other.map(|(_, r)| r.status())),
    }

    // nobody else: a colleague, another lab, an admin → 404; anonymous → sign in
    for (who, token) in [("colleague", &colleague), ("stranger", &stranger), ("admin", &admin)] {
        let resp = through(&app, Some(token), &format!("/s/{id}/api/status")).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{who}");
    }
    // what the app did not write (the proxy's 404 for another id, its
    // redirect, a path it does not route) is a sandbox without an origin
    // whose opener is cut off: a session's script that opens it with
    // window.open finds no same-origin page to call /v1 from (S1)
    let kims_own = format!("/s/{id}");
    for (path, who) in [
        ("/s/99999/", &kim),
        ("/s/", &kim),
        ("/s/abc/x", &kim),
        (kims_own.as_str(), &kim),
        (kims_own.as_str(), &colleague),
    ] {
        let resp = through(&app, Some(who), path).await;
        let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let csp = header("content-security-policy");
        assert!(csp.starts_with("sandbox;") && csp.contains("default-src 'none'"), "{path} {}: {csp}", resp.status());
        assert_eq!(header("cross-origin-opener-policy"), "same-origin", "{path}");
    }
    // nor may it install a service worker, whose pages the proxy would
    // never see: the browser fetches a worker's script with this header and
    // gets one that removes itself (replacing one installed before)
    let worker = reqwest::Client::new()
        .get(app.url(&format!("/s/{id}/files/sw.js")))
        .bearer_auth(&kim)
        .header("service-worker", "script")
        .send()
        .await
        .unwrap();
    assert_eq!(worker.status(), StatusCode::OK);
    assert!(worker.text().await.unwrap().contains("self.registration.unregister()"));
    // over plain http to a host that is not this machine, COOP does not
    // hold: no session is served there
    let elsewhere = reqwest::Client::new()
        .get(app.url(&format!("/s/{id}/lab")))
        .bearer_auth(&kim)
        .header("host", "gpu.example.edu")
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), StatusCode::FORBIDDEN);
    assert!(elsewhere.headers()["content-security-policy"].to_str().unwrap().starts_with("sandbox;"));
    let lab = through(&app, Some(&kim), &format!("/s/{id}/lab")).await;
    let csp: Vec<&str> = lab.headers().get_all("content-security-policy").iter().map(|v| v.to_str().unwrap()).collect();
    assert!(
        csp.iter().all(|p| !p.contains("sandbox")) && csp.iter().any(|p| p.contains("connect-src")),
        "the app's own page keeps its origin, held to its path: {csp:?}"
    );
    let anonymous = through(&app, None, &format!("/s/{id}/lab")).await;
    assert!(anonymous.status().is_redirection(), "{}", anonymous.status());
    assert_eq!(anonymous.headers()["location"], "/login");

    // the per-user limit: two unfinished sessions, not three
    let second = start(&app, &kim).await;
    let third = app.post(Some(&kim), "/v1/sessions", json!({"app": "jupyterlab", "num_gpus": 1})).await;
    assert_error(third, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
    let listed: Value = app.get(Some(&kim), "/v1/jobs?kind=session").await.json().await.unwrap();
    let ids: Vec<i64> = listed["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [second, id]);

    // cancel ends it, and the proxy closes with it
    for session in [id, second] {
        let status = app.cancel(&kim, session).await.status();
        assert!(matches!(status, StatusCode::OK | StatusCode::ACCEPTED), "{status}");
        let ended = app.wait_job(&kim, session, "its end", |j| j["ended_at"].is_string()).await;
        assert_eq!(ended["state"], "CANCELLED", "{ended}");
        assert_eq!(ended["session"]["state"], "ENDED", "{ended}");
    }
    let after = through(&app, Some(&kim), &format!("/s/{id}/api/status")).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_session_nobody_uses_ends_idle() {
    let Some(jupyter) = jupyter() else { return };
    // three seconds of idleness here; an hour by default
    let app = server(3_101_100, &jupyter, 0.05).await;
    let token = app.demo_token().await;
    let id = start(&app, &token).await;
    wait_ready(&app, &token, id).await;
    // its page warns (the last 10 idle minutes are all of these 3 s);
    // reading the page is not use of the session
    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    let page = app.page(&format!("/jobs/{id}")).await.text().await.unwrap();
    assert!(page.contains(r#"data-testid="idle-warning""#) || page.contains("has ended"), "{page}");
    let ended = app.wait_job(&token, id, "the idle end", |j| j["ended_at"].is_string()).await;
    assert_eq!(ended["state"], "CANCELLED");
    assert_eq!(ended["end_reason"], "IDLE");
    assert_eq!(ended["session"]["state"], "ENDED");
    let after = through(&app, Some(&token), &format!("/s/{id}/api/status")).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

/// A kernel computing for longer than the idle time keeps its session (no
/// traffic meanwhile), a server killed and started again still reaches
/// the READY session, and once nobody uses it, it ends IDLE.
#[tokio::test]
async fn a_busy_kernel_keeps_its_session_across_a_server_restart_until_it_idles() {
    let Some(jupyter) = jupyter() else { return };
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND", jupyter.as_str()),
        ("JPU__SESSIONS__IDLE_MINUTES", "0.1"),
        ("JPU__EXECUTOR__UID_RANGE", "3101200-3101299"),
    ];
    let server = ServerProcess::start(dir.path(), &env).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let id = start(&app, &token).await;
    wait_ready(&app, &token, id).await;

    // 10 s without a byte through the proxy, 6 s of idle allowed
    let printed = run_in_kernel(&app, &token, id, "import time\ntime.sleep(10)\nprint('computed')\n").await;
    assert!(printed.contains("computed"), "{printed}");
    let job: Value = app.job(&token, id).await.json().await.unwrap();
    assert_eq!(job["state"], "RUNNING", "a busy kernel is use: {job}");

    server.kill9().await;
    let dir = app.stop().await;
    let server = ServerProcess::start(dir.path(), &env).await;
    let app = TestApp::attach(server.base.clone(), dir);
    let token = app.demo_token().await;
    let status = through(&app, Some(&token), &format!("/s/{id}/api/status")).await;
    assert_eq!(status.status(), StatusCode::OK, "READY across the restart");

    let ended = app.wait_job(&token, id, "the idle end", |j| j["ended_at"].is_string()).await;
    assert_eq!((ended["state"].as_str(), ended["end_reason"].as_str()), (Some("CANCELLED"), Some("IDLE")), "{ended}");
    server.kill9().await;
}

/// `jpu session start` waits for READY and prints the URL; `list` shows
/// it; `jpu cancel` ends it like any job.
#[tokio::test]
async fn the_command_line_starts_lists_and_cancels_a_session() {
    let Some(jupyter) = jupyter() else { return };
    let app = server(3_101_300, &jupyter, 600.0).await;
    let config = tempfile::tempdir().unwrap();
    let cfg = config.path();
    let login = jpu(cfg, &["login", "--server", &app.base, "-u", "demo"], Some(DEMO_PASSWORD)).await;
    assert_eq!(login.code, 0, "{}", login.stderr);

    let unknown = jpu(cfg, &["session", "start", "rstudio"], None).await;
    assert_eq!(unknown.code, 1, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("VALIDATION") && unknown.stderr.contains("jupyterlab"), "{}", unknown.stderr);

    let started = jpu(cfg, &["session", "start", "jupyterlab", "--gpus", "1", "--time", "240"], None).await;
    assert_eq!(started.code, 0, "{}", started.stderr);
    let id: i64 = started.stdout.split_whitespace().nth(1).and_then(|w| w.parse().ok()).expect(&started.stdout);
    let url = format!("{}/s/{id}/", app.base);
    assert!(started.stdout.contains(&format!("open {url}")), "{}", started.stdout);
    let token = app.demo_token().await;
    assert_eq!(through(&app, Some(&token), &format!("/s/{id}/api/status")).await.status(), StatusCode::OK);
    let job: Value = app.job(&token, id).await.json().await.unwrap();
    assert_eq!(job["time_limit_minutes"], 240);

    let list = jpu(cfg, &["session", "list"], None).await;
    assert_eq!(list.code, 0, "{}", list.stderr);
    let row = list.stdout.lines().find(|l| l.starts_with(&id.to_string())).expect(&list.stdout);
    assert!(row.contains("jupyterlab") && row.contains("READY") && row.contains(&url), "{row}");

    let cancel = jpu(cfg, &["cancel", &id.to_string()], None).await;
    assert_eq!(cancel.code, 0, "{}", cancel.stderr);
    app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    let list = jpu(cfg, &["session", "list"], None).await;
    let row = list.stdout.lines().find(|l| l.starts_with(&id.to_string())).expect(&list.stdout);
    assert!(row.contains("ENDED") && !row.contains("/s/"), "{row}");
}

/// The console: "Start a notebook" on the submit page and the dashboard
/// starts one (a form post, as the browser sends it) and lands on its
/// page, which offers "Open JupyterLab" to its owner only once it is
/// ready; the jobs list marks it.
#[tokio::test]
async fn the_console_starts_a_notebook_and_offers_to_open_it() {
    use leptos::server_fn::ServerFn;
    let Some(jupyter) = jupyter() else { return };
    let app = server(3_101_400, &jupyter, 600.0).await;
    let admin = app.admin_token().await;
    app.researcher(&admin, "lee", "demo-lab").await;
    let token = app.demo_token().await;
    assert_eq!(app.console_login("demo", DEMO_PASSWORD).await.status(), StatusCode::SEE_OTHER);
    for page in ["/submit", "/"] {
        let html = app.client.get(app.url(page)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains(r#"data-testid="start-notebook""#), "{page} offers a notebook");
    }
    let start = |gpus: &'static str| {
        app.client
            .post(app.url(app::api::StartSession::PATH))
            .header("origin", &app.base)
            .form(&[("app", "jupyterlab"), ("num_gpus", gpus), ("time_limit_minutes", "90"), ("workspace", "")])
            .send()
    };
    let refused: Value = start("lots").await.unwrap().json().await.unwrap();
    assert_eq!(refused["code"], "VALIDATION", "{refused}");
    let started = start("1").await.unwrap();
    let to: String = started.json().await.unwrap();
    let id: i64 = to.strip_prefix("/jobs/").and_then(|n| n.parse().ok()).expect(&to);
    wait_ready(&app, &token, id).await;

    let page = app.client.get(app.url(&to)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains(r#"data-testid="open-session""#) && page.contains(&format!(r#"href="/s/{id}/""#)), "{page}");
    assert!(!page.contains("idle-warning"), "no warning with 10 idle hours left");
    assert!(page.contains("Open JupyterLab") && page.contains("Time left: 89 minutes"), "{page}");
    let list = app.client.get(app.url("/jobs")).send().await.unwrap().text().await.unwrap();
    assert!(list.contains(r#"data-testid="session-badge""#), "the jobs list marks sessions");

    // a colleague sees the job, but no button
    let colleague = crate::helpers::client();
    let login = app.console_login_as(&colleague, "lee", "lee-password").await;
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    let theirs = colleague.get(app.url(&to)).send().await.unwrap().text().await.unwrap();
    assert!(theirs.contains(r#"data-testid="session""#) && !theirs.contains("open-session"), "{theirs}");
    assert_eq!(colleague.get(app.url(&format!("/s/{id}/lab"))).send().await.unwrap().status(), StatusCode::NOT_FOUND);
}

/// A session is a job for the per-user limits too: with one unfinished
/// job allowed and one waiting, a session is refused like a second job.
#[tokio::test]
async fn a_session_counts_toward_the_unfinished_jobs_limit() {
    let app = TestApp::spawn_local_with(|s| s.scheduler.max_unfinished_per_user = 1).await;
    let token = app.demo_token().await;
    app.submit_ok(&token, json!({"name": "holds", "command": "sleep 600", "num_gpus": 1})).await;
    let refused = app.post(Some(&token), "/v1/sessions", json!({"app": "jupyterlab", "num_gpus": 1})).await;
    assert_error(refused, StatusCode::TOO_MANY_REQUESTS, "QUEUE_LIMIT").await;
    let unknown = app.post(Some(&token), "/v1/sessions", json!({"app": "rstudio", "num_gpus": 1})).await;
    assert_error(unknown, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    let listed: Value = app.get(Some(&token), "/v1/jobs?kind=notebook").await.json().await.unwrap();
    assert_eq!(listed["error"]["code"], "VALIDATION", "{listed}");
}

/// On Slurm the app listens on a port of its node, asking a token the job
/// drew itself: the proxy reaches it at the node's address from Slurm's
/// node list and adds the token, which never reaches the browser (the
/// `/lab` page's config carries it: scrubbed) and without which the port
/// answers nothing; the kernel runs as the user's Slurm uid.
#[tokio::test]
async fn on_slurm_a_notebook_is_reached_on_its_node_with_a_token_the_browser_never_sees() {
    use std::os::unix::fs::PermissionsExt;
    let Some(jupyter) = jupyter() else { return };
    let _cluster = crate::slurm::CLUSTER.lock().await;
    let Some(app) = TestApp::spawn_slurm_with(|s| {
        s.sessions.apps.get_mut("jupyterlab").expect("the default app").command = jupyter;
    })
    .await
    else {
        return;
    };
    let token = app.demo_token().await;
    let admin = app.admin_token().await;
    let id = start(&app, &token).await;
    // a failed assertion must not leave the notebook holding the shared
    // cluster's GPUs for the Slurm tests after this one
    struct CancelDemosJobs;
    impl Drop for CancelDemosJobs {
        fn drop(&mut self) {
            let _ = std::process::Command::new("scancel").arg("--user=3901").status();
        }
    }
    let _cleanup = CancelDemosJobs;
    let job = wait_ready(&app, &token, id).await;
    assert!(job["node"].as_str().is_some_and(|n| n.starts_with('s')), "on a Slurm node: {job}");

    let runtime = app.output_dir(id).join(".jpu-session");
    let secret = std::fs::read_to_string(runtime.join("token")).expect("the job's token file");
    assert!(secret.trim().len() >= 32, "{secret:?}");
    assert_eq!(std::fs::metadata(runtime.join("token")).unwrap().permissions().mode() & 0o077, 0, "the job's alone");

    let page = through(&app, Some(&token), &format!("/s/{id}/lab")).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers().contains_key("content-encoding"), "compressed, as for a browser: {:?}", page.headers());
    let html = read_text(page).await;
    assert!(html.contains("JupyterLab") && html.contains(r#""token": """#), "the page's token is scrubbed");
    assert!(!html.contains(secret.trim()), "the app's token reached the browser");

    // the port itself: nothing without the token
    let announced = std::fs::read_dir(&runtime)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("jpserver-") && n.ends_with(".json")))
        .expect("Jupyter's runtime file");
    let info: Value = serde_json::from_str(&std::fs::read_to_string(announced.path()).unwrap()).unwrap();
    let direct = format!("http://127.0.0.1:{}/s/{id}/api/kernels", info["port"]);
    let bare = reqwest::get(&direct).await.unwrap().status();
    assert_eq!(bare, StatusCode::FORBIDDEN, "the node's port without the token");

    let printed = run_in_kernel(&app, &token, id, "import os\nprint('uid', os.getuid())\n").await;
    assert!(printed.contains("uid 3901\n"), "the kernel runs as demo's Slurm uid: {printed}");
    let resp = through(&app, Some(&admin), &format!("/s/{id}/api/status")).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND, "an admin");

    let status = app.cancel(&token, id).await.status();
    assert!(matches!(status, StatusCode::OK | StatusCode::ACCEPTED), "{status}");
    let ended = app.wait_job(&token, id, "its end", |j| j["ended_at"].is_string()).await;
    assert_eq!(ended["state"], "CANCELLED", "{ended}");
    assert_eq!(through(&app, Some(&token), &format!("/s/{id}/api/status")).await.status(), StatusCode::NOT_FOUND);
}
