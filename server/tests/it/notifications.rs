//! Notifications against real receivers: an HTTP server of the test's own
//! that records each webhook (and can refuse or answer late), and a real
//! SMTP server (aiosmtpd from PyPI, installed by `.ci/install-tools
//! test`). Settings and their limits, signatures, retries with back-off,
//! targets refused, and an outbox that loses nothing across `kill -9`.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxStatus};
use hmac::Mac;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::helpers::{assert_error, TestApp};
use crate::process::ServerProcess;

/// One request a receiver got, and what it answered.
#[derive(Clone, Debug)]
pub struct Seen {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub answered: u16,
}

impl Seen {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("webhook body is JSON")
    }
    fn header(&self, name: &str) -> String {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
    }
}

/// A webhook receiver on 127.0.0.1: records every POST to `/hook` and
/// answers `status` (settable while it runs).
pub struct Receiver {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub status: Arc<AtomicU16>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        type Shared = (Arc<Mutex<Vec<Seen>>>, Arc<AtomicU16>);
        async fn hook(State((seen, status)): State<Shared>, headers: HeaderMap, body: axum::body::Bytes) -> AxStatus {
            let answered = status.load(Ordering::SeqCst);
            seen.lock().unwrap().push(Seen { headers, body: body.to_vec(), answered });
            AxStatus::from_u16(answered).unwrap()
        }
        let seen = Arc::new(Mutex::new(Vec::new()));
        let status = Arc::new(AtomicU16::new(200));
        let app =
            axum::Router::new().route("/hook", axum::routing::post(hook)).with_state((seen.clone(), status.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, seen, status }
    }

    pub fn accepted(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.answered == 200).cloned().collect()
    }
}

fn verify(secret: &str, seen: &Seen) {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&seen.body);
    let want: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(seen.header("x-jpu-signature"), format!("sha256={want}"), "signed with the secret answered once");
}

async fn put(app: &TestApp, token: &str, body: Value) -> reqwest::Response {
    app.client.put(app.url("/v1/me/notifications")).bearer_auth(token).json(&body).send().await.unwrap()
}

fn timed(name: &str, seconds: &str) -> Value {
    json!({"name": name, "command": "python train.py", "num_gpus": 1, "env": {"JPU_SIM_SECONDS": seconds}})
}

#[tokio::test]
async fn a_webhook_gets_each_event_signed_and_retried_until_it_answers() {
    let app = TestApp::spawn_scheduling_with(|s| s.notify.retry_base_ms = 100).await;
    let demo = app.demo_token().await;
    let receiver = Receiver::start().await;
    let defaults: Value = app.get(Some(&demo), "/v1/me/notifications").await.json().await.unwrap();
    assert_eq!(defaults, json!({"email": null, "webhook_url": null, "events": ["started", "ended", "retried"]}));

    let set: Value = put(&app, &demo, json!({"webhook_url": receiver.url})).await.json().await.unwrap();
    let secret = set["webhook_secret"].as_str().expect("the secret, once").to_string();
    assert_eq!(secret.len(), 64);
    let shown: Value = app.get(Some(&demo), "/v1/me/notifications").await.json().await.unwrap();
    assert!(shown.get("webhook_secret").is_none(), "never shown again: {shown}");
    let same: Value = put(&app, &demo, json!({"webhook_url": receiver.url})).await.json().await.unwrap();
    assert!(same.get("webhook_secret").is_none(), "the same URL keeps its secret");

    // the receiver refuses at first: the event is retried until it answers
    receiver.status.store(503, Ordering::SeqCst);
    let id = app.submit_ok(&demo, timed("notified", "0.3")).await["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "COMPLETED").await;
    app.wait_until("refused tries", || async { receiver.seen.lock().unwrap().len() >= 3 }).await;
    receiver.status.store(200, Ordering::SeqCst);
    app.wait_until("both events accepted", || async { receiver.accepted().len() == 2 }).await;

    let accepted = receiver.accepted();
    let events: Vec<String> = accepted.iter().map(|s| s.json()["event"].as_str().unwrap().to_string()).collect();
    let mut sorted = events.clone();
    sorted.sort();
    assert_eq!(sorted, ["ended", "started"]);
    for seen in &accepted {
        verify(&secret, seen);
        let body = seen.json();
        assert_eq!(body["job"]["id"], id);
        assert!(body["sent_at"].as_str().unwrap().ends_with('Z'));
        assert_eq!(seen.header("x-jpu-event"), body["event"].as_str().unwrap());
        match body["event"].as_str().unwrap() {
            "started" => assert_eq!(body["job"]["state"], "RUNNING", "the job as it was at the event"),
            _ => {
                assert_eq!(body["job"]["state"], "COMPLETED");
                assert_eq!(body["job"]["end_reason"], "COMPLETED");
            }
        }
    }
    // the receiver answers before the outcome is written down
    let listed =
        || async { app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json::<Value>().await.unwrap() };
    app.wait_until("both recorded as delivered", || async {
        listed().await["deliveries"].as_array().is_some_and(|d| d.iter().all(|d| d["state"] == "DELIVERED"))
    })
    .await;
    let list = listed().await;
    let deliveries = list["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2);
    assert!(deliveries.iter().all(|d| d["state"] == "DELIVERED" && d["channel"] == "webhook"), "{list}");
    assert!(deliveries.iter().any(|d| d["attempts"].as_u64().unwrap() >= 2), "retried: {list}");
    for d in deliveries {
        let id = d["id"].to_string();
        let tries = receiver.seen.lock().unwrap().iter().filter(|s| s.header("x-jpu-delivery") == id).count();
        assert_eq!(tries as u64, d["attempts"].as_u64().unwrap(), "one request per try, same delivery id");
    }

    // only the events asked for
    put(&app, &demo, json!({"webhook_url": receiver.url, "events": ["ended"]})).await;
    let before = receiver.accepted().len();
    let quiet = app.submit_ok(&demo, timed("only-end", "0.1")).await["id"].as_i64().unwrap();
    app.wait_state(&demo, quiet, "COMPLETED").await;
    app.wait_until("the end", || async { receiver.accepted().len() == before + 1 }).await;
    assert_eq!(receiver.accepted().last().unwrap().json()["event"], "ended");
}

#[tokio::test]
async fn an_oom_retry_is_an_event_too() {
    let app = TestApp::spawn_scheduling().await;
    let admin = app.admin_token().await;
    let demo = app.demo_token().await;
    let receiver = Receiver::start().await;
    put(&app, &demo, json!({"webhook_url": receiver.url, "events": ["retried"]})).await;
    // both 4090s busy: the job starts on the 12 GB tier and runs out of memory
    for i in 0..2 {
        let id = app.submit_ok(&admin, timed(&format!("block{i}"), "60")).await["id"].as_i64().unwrap();
        app.wait_state(&admin, id, "RUNNING").await;
    }
    let oom = json!({"name": "big", "command": "python train.py", "num_gpus": 1,
        "env": {"JPU_SIM_SECONDS": "0.1", "JPU_SIM_EXIT": "1", "JPU_SIM_OUTPUT": "CUDA out of memory"}});
    let id = app.submit_ok(&demo, oom).await["id"].as_i64().unwrap();
    app.wait_until("the retry event", || async { !receiver.accepted().is_empty() }).await;
    let body = receiver.accepted()[0].json();
    assert_eq!(body["event"], "retried");
    assert_eq!(body["job"]["id"], id);
    assert_eq!(body["job"]["attempt"], 2);
}

#[tokio::test]
async fn webhook_targets_and_settings_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.notify.webhook_allow = vec![".example.edu".into(), "10.20.0.0/16".into()];
    let restricted = TestApp::spawn_with(dir, settings).await;
    let app = TestApp::spawn().await;
    let demo = app.demo_token().await;
    let table = [
        (json!({"webhook_url": "http://169.254.169.254/latest/meta-data/"}), "link-local"),
        (json!({"webhook_url": "http://[fe80::1]/x"}), "link-local"),
        (json!({"webhook_url": "http://[::ffff:169.254.169.254]/x"}), "link-local"),
        (json!({"webhook_url": "http://metadata.google.internal/x"}), "metadata"),
        (json!({"webhook_url": "file:///etc/passwd"}), "http or https"),
        (json!({"webhook_url": "https://user:pw@example.org/"}), "user name or password"),
        (json!({"webhook_url": format!("http://e.org/{}", "x".repeat(2048))}), "at most 2048"),
        (json!({"events": ["finished"]}), "not one of"),
        (json!({"events": ["ended", "ended"]}), "twice"),
        (json!({"email": "demo@example.edu"}), "sends no e-mail"),
    ];
    for (body, says) in table {
        let message =
            assert_error(put(&app, &demo, body.clone()).await, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
        assert!(message.contains(says), "{body}: {message}");
    }
    let unknown = put(&app, &demo, json!({"webhook": "http://x/"})).await;
    assert!(unknown.status().is_client_error(), "unknown fields are refused");
    // an admin's allow list keeps webhooks to the listed names and ranges
    let demo2 = restricted.demo_token().await;
    let message = assert_error(
        put(&restricted, &demo2, json!({"webhook_url": "http://127.0.0.1:9/hook"})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "VALIDATION",
    )
    .await;
    assert!(message.contains("notify.webhook_allow"), "{message}");
    assert_eq!(
        put(&restricted, &demo2, json!({"webhook_url": "http://10.20.1.2:8080/hook"})).await.status(),
        StatusCode::OK
    );
    // turning everything off is a PUT of nulls
    let off: Value =
        put(&app, &demo, json!({"email": null, "webhook_url": null, "events": []})).await.json().await.unwrap();
    assert_eq!(off, json!({"email": null, "webhook_url": null, "events": []}));
}

/// A real SMTP server (aiosmtpd) writing what it receives to a maildir;
/// None when it is not installed and the run does not require it.
struct Smtp {
    child: tokio::process::Child,
    port: u16,
    maildir: tempfile::TempDir,
}

impl Smtp {
    async fn start() -> Option<Smtp> {
        let python = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/aiosmtpd/bin/python");
        if !std::path::Path::new(python).exists() {
            assert!(
                std::env::var_os("JPU_TEST_SMTP").is_none(),
                "JPU_TEST_SMTP is set but aiosmtpd is not installed: run .ci/install-tools test"
            );
            eprintln!("no aiosmtpd: skipping an e-mail test (make test runs it)");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let maildir = tempfile::tempdir().unwrap();
        let child = tokio::process::Command::new(python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir.path().join("mail"))
            .kill_on_drop(true)
            .spawn()
            .expect("aiosmtpd starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(std::time::Instant::now() < deadline, "aiosmtpd did not listen");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        Some(Smtp { child, port, maildir })
    }

    fn messages(&self) -> Vec<String> {
        let new = self.maildir.path().join("mail").join("new");
        let Ok(entries) = std::fs::read_dir(new) else { return Vec::new() };
        entries.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()).collect()
    }
}

#[tokio::test]
async fn e_mail_goes_through_a_real_smtp_server() {
    let Some(mut smtp) = Smtp::start().await else { return };
    let port = smtp.port;
    let app = TestApp::spawn_scheduling_with(move |s| {
        s.notify.smtp_url = format!("smtp://127.0.0.1:{port}");
        s.notify.from = "JPU-Share <gpu@example.edu>".into();
    })
    .await;
    let demo = app.demo_token().await;
    let bad = put(&app, &demo, json!({"email": "not an address"})).await;
    assert_error(bad, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION").await;
    let set: Value =
        put(&app, &demo, json!({"email": "kim@example.edu", "events": ["ended"]})).await.json().await.unwrap();
    assert_eq!(set["email"], "kim@example.edu");
    let failing = json!({"name": "train\u{e9}", "command": "python train.py", "num_gpus": 1,
                         "env": {"JPU_SIM_SECONDS": "0.1", "JPU_SIM_EXIT": "3"}});
    let id = app.submit_ok(&demo, failing).await["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "FAILED").await;
    app.wait_until("the e-mail", || async { !smtp.messages().is_empty() }).await;
    let mail = smtp.messages().remove(0);
    assert!(mail.contains("To: kim@example.edu"), "{mail}");
    assert!(mail.contains("From: JPU-Share <gpu@example.edu>"), "{mail}");
    assert!(mail.contains(&format!("job {id}")) && mail.contains("ended FAILED"), "{mail}");
    assert!(mail.contains("exit code: 3") && mail.contains("end reason: NONZERO_EXIT"), "{mail}");
    // the message lands in the maildir a moment before the outcome is committed
    let deliveries = || async {
        let list: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
        list["deliveries"][0].clone()
    };
    app.wait_until("the delivery recorded", || async { deliveries().await["state"] == "DELIVERED" }).await;
    assert_eq!(deliveries().await["channel"], "email");

    // once they choose Korean in the console, their e-mail comes in Korean
    let browser = crate::helpers::client();
    app.console_login_as(&browser, "demo", crate::helpers::DEMO_PASSWORD).await;
    browser.get(app.url("/lang/ko?back=/")).send().await.unwrap();
    let failing = json!({"name": "again", "command": "false", "num_gpus": 1,
                         "env": {"JPU_SIM_SECONDS": "0.1", "JPU_SIM_EXIT": "3"}});
    let id = app.submit_ok(&demo, failing).await["id"].as_i64().unwrap();
    app.wait_state(&demo, id, "FAILED").await;
    app.wait_until("the second e-mail", || async { smtp.messages().len() >= 2 }).await;
    let mails: Vec<String> = smtp.messages().iter().map(|m| decoded(m)).collect();
    let body = mails.iter().find(|m| !m.contains("ended FAILED")).expect("a second e-mail");
    assert!(body.contains(&format!("작업 {id}")) && body.contains("종료 사유"), "{body}");
    assert!(body.contains("NONZERO_EXIT"), "the code stays: {body}");
    let _ = smtp.child.kill().await;
}

/// The text of an e-mail as its reader sees it: lettre sends non-ASCII
/// bodies quoted-printable or base64, and subjects as encoded words.
fn decoded(mail: &str) -> String {
    use base64::Engine;
    let mut out = String::new();
    let (head, body) = mail.split_once("\r\n\r\n").or_else(|| mail.split_once("\n\n")).unwrap_or((mail, ""));
    out.push_str(head);
    out.push('\n');
    if head.to_ascii_lowercase().contains("content-transfer-encoding: base64") {
        let joined: String = body.split_whitespace().collect();
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(joined) {
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    } else if head.to_ascii_lowercase().contains("quoted-printable") {
        let soft = body.replace("=\r\n", "").replace("=\n", "");
        let mut bytes = Vec::new();
        let raw = soft.as_bytes();
        let mut i = 0;
        while i < raw.len() {
            if raw[i] == b'=' && i + 3 <= raw.len() {
                if let Some(b) =
                    std::str::from_utf8(&raw[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    bytes.push(b);
                    i += 3;
                    continue;
                }
            }
            bytes.push(raw[i]);
            i += 1;
        }
        out.push_str(&String::from_utf8_lossy(&bytes));
    } else {
        out.push_str(body);
    }
    out
}

#[tokio::test]
async fn the_outbox_loses_nothing_and_sends_nothing_twice_across_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let env = [("JPU__NOTIFY__RETRY_BASE_MS", "200")];
    let server = ServerProcess::start(dir.path(), &env).await;
    let app = TestApp::attach(server.base.clone(), tempfile::tempdir().unwrap());
    let demo = app.demo_token().await;
    let receiver = Receiver::start().await;
    receiver.status.store(503, Ordering::SeqCst);
    let set: Value = put(&app, &demo, json!({"webhook_url": receiver.url})).await.json().await.unwrap();
    let secret = set["webhook_secret"].as_str().unwrap().to_string();
    let mut jobs = Vec::new();
    for i in 0..3 {
        let body = json!({"name": format!("j{i}"), "command": "true", "num_gpus": 1});
        jobs.push(app.submit_ok(&demo, body).await["id"].as_i64().unwrap());
    }
    for id in &jobs {
        app.wait_state(&demo, *id, "COMPLETED").await;
    }
    // six events, each refused at least once, none delivered yet
    app.wait_until("every event tried", || async {
        let list: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
        let d = list["deliveries"].as_array().unwrap().clone();
        d.len() == 6 && d.iter().all(|d| d["attempts"].as_u64().unwrap() >= 1)
    })
    .await;
    server.kill9().await;

    receiver.status.store(200, Ordering::SeqCst);
    let server = ServerProcess::start(dir.path(), &env).await;
    let app = TestApp::attach(server.base.clone(), tempfile::tempdir().unwrap());
    app.wait_until("all delivered after the restart", || async { receiver.accepted().len() >= 6 }).await;
    // the receiver has the last request a moment before its outcome is committed
    app.wait_until("all recorded as delivered", || async {
        let list: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
        list["deliveries"].as_array().unwrap().iter().all(|d| d["state"] == "DELIVERED")
    })
    .await;
    // give a duplicate the time to show up, were there one
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let accepted = receiver.accepted();
    assert_eq!(accepted.len(), 6, "nothing twice");
    let mut seen: Vec<(i64, String)> = accepted
        .iter()
        .map(|s| (s.json()["job"]["id"].as_i64().unwrap(), s.json()["event"].as_str().unwrap().to_string()))
        .collect();
    seen.sort();
    let mut want: Vec<(i64, String)> =
        jobs.iter().flat_map(|id| [(*id, "ended".to_string()), (*id, "started".to_string())]).collect();
    want.sort();
    assert_eq!(seen, want, "every job's start and end, once each");
    for s in &accepted {
        verify(&secret, s);
    }
    server.kill9().await;
}

/// A target that accepts connections and never answers; counts them.
async fn silent_target() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(socket);
        }
    });
    (url, accepted)
}

#[tokio::test]
async fn a_silent_webhook_delays_only_its_owners_deliveries() {
    let app = TestApp::spawn_scheduling().await;
    let demo = app.demo_token().await;
    let admin = app.admin_token().await;
    let kim = app.researcher(&admin, "kim", "kim-lab").await;
    let (silent, connections) = silent_target().await;
    put(&app, &demo, json!({"webhook_url": silent})).await;
    let first = app.submit_ok(&demo, timed("noisy", "0.05")).await["id"].as_i64().unwrap();
    app.wait_state(&demo, first, "COMPLETED").await;
    // 64 events for the silent target in all
    app.sql(
        "INSERT INTO notification_outbox (user_id, job_id, event, channel, target, snapshot, created_at, next_attempt_at)
         SELECT o.user_id, o.job_id, o.event, o.channel, o.target, o.snapshot, o.created_at, o.next_attempt_at
         FROM notification_outbox o, (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 31) SELECT i FROM n) AS copies",
    )
    .await;
    assert_eq!(app.sql_number("SELECT COUNT(*) * 1.0 FROM notification_outbox").await, 64.0);
    app.wait_until("the silent target's first sends", || async { connections.load(Ordering::SeqCst) >= 1 }).await;

    let receiver = Receiver::start().await;
    put(&app, &kim, json!({"webhook_url": receiver.url})).await;
    let id = app.submit_ok(&kim, timed("quiet", "0.05")).await["id"].as_i64().unwrap();
    app.wait_state(&kim, id, "COMPLETED").await;
    app.wait_until("kim's two events", || async { receiver.accepted().len() == 2 }).await;
    // kim's went through while the silent target's first sends still hang
    // (a try ends only after 10 s): they did not wait for them
    let demo_tries = app.sql_number("SELECT SUM(attempts) * 1.0 FROM notification_outbox WHERE target = (SELECT webhook_url FROM notification_settings WHERE user_id = (SELECT id FROM users WHERE username = 'demo'))").await;
    assert_eq!(demo_tries, 0.0, "no try at the silent target has ended yet");
    assert!(connections.load(Ordering::SeqCst) <= 2, "one target holds at most two senders");
}

#[tokio::test]
async fn webhooks_cannot_scan_the_sites_network() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = crate::helpers::test_settings(dir.path());
    settings.notify.webhook_allow = Vec::new();
    let app = TestApp::spawn_with(dir, settings).await;
    let demo = app.demo_token().await;
    // inside the site's network unless allowed; the metadata address in
    // disguise, never
    let inside = "notify.webhook_allow";
    let table = [
        ("http://127.0.0.1:22/", inside),
        ("http://2130706433:22/", inside),
        ("http://0x7f000001/", inside),
        ("http://0177.0.0.1/", inside),
        ("http://[::ffff:127.0.0.1]/", inside),
        ("http://[::1]/", inside),
        ("http://10.1.2.3/", inside),
        ("http://192.168.1.1/", inside),
        ("http://172.16.0.1/", inside),
        ("http://100.64.0.1/", inside),
        ("http://localhost:8080/", inside),
        ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),
        ("http://[::a9fe:a9fe]/", "link-local"),
        ("http://[::ffff:a9fe:a9fe]/", "link-local"),
    ];
    for (url, says) in table {
        let message = assert_error(
            put(&app, &demo, json!({"webhook_url": url})).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
        )
        .await;
        assert!(message.contains(says), "{url}: {message}");
    }
}

#[tokio::test]
async fn a_researcher_learns_only_delivered_or_the_status_a_target_answered() {
    // loopback allowed (the helpers' default), to have targets to test with
    let app = TestApp::spawn_scheduling_with(|s| s.notify.retry_base_ms = 60_000).await;
    let demo = app.demo_token().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let refusing = Receiver::start().await;
    refusing.status.store(403, Ordering::SeqCst);
    let mut errors = Vec::new();
    for (i, url) in [format!("http://{closed}/hook"), refusing.url.clone()].into_iter().enumerate() {
        put(&app, &demo, json!({"webhook_url": url, "events": ["ended"]})).await;
        let id = app.submit_ok(&demo, timed(&format!("probe-{i}"), "0.05")).await["id"].as_i64().unwrap();
        app.wait_state(&demo, id, "COMPLETED").await;
        app.wait_until("the try", || async {
            let list: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
            list["deliveries"].as_array().unwrap().iter().any(|d| d["job"] == id && d["attempts"] == 1)
        })
        .await;
        let list: Value = app.get(Some(&demo), "/v1/me/notifications/deliveries").await.json().await.unwrap();
        let d = list["deliveries"].as_array().unwrap().iter().find(|d| d["job"] == id).unwrap().clone();
        errors.push(d["last_error"].as_str().unwrap_or_default().to_string());
    }
    assert_eq!(errors, ["the target did not answer", "the target answered HTTP 403"]);
}
