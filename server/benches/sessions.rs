//! Interactive sessions against a real JupyterLab (`.ci/install-tools`
//! puts it in /opt/jpu-share/jupyterlab), through the release binary run
//! as its own process on the local executor:
//!
//! - submit → `READY` on an idle GPU (the app's start plus the watcher's
//!   one-second tick);
//! - the proxy's cost per request (`GET api/status`) and per kernel round
//!   trip (an `execute_request` over the WebSocket until its reply),
//!   against the same asked of Jupyter directly on its Unix socket;
//! - the server's resident memory per open session (its page loaded and a
//!   kernel's socket held open).
//!
//! Run: `cargo bench -p server --bench sessions` (as root: jobs run as
//! their own uids).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

mod support;

const JUPYTER: &str = "/opt/jpu-share/jupyterlab/bin/jupyter-lab";
const READY_SAMPLES: usize = 5;
const REQUESTS: usize = 300;
const ROUND_TRIPS: usize = 200;
const OPEN_SESSIONS: usize = 4;

#[tokio::main]
async fn main() {
    let jupyter = std::env::var("JPU_JUPYTER_LAB").unwrap_or_else(|_| JUPYTER.into());
    if !Path::new(&jupyter).is_file() || !nix::unistd::geteuid().is_root() {
        println!("(sessions not measured: needs root and JupyterLab at {jupyter}; run .ci/install-tools)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let client = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let env = [
        ("JPU__SESSIONS__APPS__JUPYTERLAB__COMMAND", jupyter.as_str()),
        ("JPU__SESSIONS__MAX_PER_USER", "8"),
        ("JPU__SCHEDULER__MAX_UNFINISHED_PER_USER", "100"),
    ];
    let server = support::process::Server::start(dir.path(), &client, &env).await;
    let base = server.base.clone();
    let token = support::demo_token(&client, &base).await;
    let sockets = dir.path().join("jobs");

    // 1. submit → READY
    let mut ready = Vec::new();
    for _ in 0..READY_SAMPLES {
        let started = Instant::now();
        let id = start(&client, &base, &token).await;
        wait(&client, &base, &token, id, |j| j["session"]["state"] == "READY").await;
        ready.push(started.elapsed());
        end(&client, &base, &token, id).await;
    }
    println!("submit -> READY on an idle GPU, {READY_SAMPLES} sessions: {}", support::spread(&mut ready));

    // 2. one request, through the proxy and directly
    let id = start(&client, &base, &token).await;
    wait(&client, &base, &token, id, |j| j["session"]["state"] == "READY").await;
    let socket = socket_of(&sockets, id);
    let mut proxied = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..REQUESTS {
        let t = Instant::now();
        let resp = client.get(format!("{base}/s/{id}/api/status")).bearer_auth(&token).send().await.unwrap();
        assert!(resp.status().is_success());
        resp.bytes().await.unwrap();
        proxied.push(t.elapsed());
        let t = Instant::now();
        get_direct(&socket, &format!("/s/{id}/api/status")).await;
        direct.push(t.elapsed());
    }
    println!("GET api/status, {REQUESTS} each: through the proxy {}", support::spread(&mut proxied));
    println!("                          directly on the socket {}", support::spread(&mut direct));

    // 3. a kernel round trip, through the proxy and directly
    let kernel = new_kernel(&client, &base, &token, id).await;
    let path = format!("/s/{id}/api/kernels/{kernel}/channels");
    let mut request = format!("{}{path}", base.replace("http://", "ws://")).into_client_request().unwrap();
    request.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    request.headers_mut().insert("origin", base.parse().unwrap());
    // no Nagle on the client's side either, as browsers do
    let (mut through, _) =
        tokio_tungstenite::connect_async_with_config(request, None, true).await.expect("proxied socket");
    let stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let (mut plain, _) =
        tokio_tungstenite::client_async(format!("ws://localhost{path}"), stream).await.expect("direct socket");
    let (mut proxied, mut direct) = (Vec::new(), Vec::new());
    for i in 0..ROUND_TRIPS {
        proxied.push(round_trip(&mut through, &format!("p{i}")).await);
        direct.push(round_trip(&mut plain, &format!("d{i}")).await);
    }
    println!(
        "kernel round trip (execute `1`), {ROUND_TRIPS} each: through the proxy {}",
        support::spread(&mut proxied)
    );
    println!("                                          directly on the socket {}", support::spread(&mut direct));
    drop((through, plain));
    end(&client, &base, &token, id).await;

    // 4. memory per open session
    // two users: one user may run two jobs at once by default
    let admin = support::token(&client, &base, "admin", support::ADMIN_PASSWORD).await;
    let (before, _) = server.rss_kb();
    let mut held = Vec::new();
    for i in 0..OPEN_SESSIONS {
        let token = if i % 2 == 0 { &token } else { &admin };
        let id = start(&client, &base, token).await;
        wait(&client, &base, token, id, |j| j["session"]["state"] == "READY").await;
        // loads its page, as a browser would, then starts a kernel
        let kernel = new_kernel(&client, &base, token, id).await;
        let url = format!("{}/s/{id}/api/kernels/{kernel}/channels", base.replace("http://", "ws://"));
        let mut request = url.into_client_request().unwrap();
        request.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        request.headers_mut().insert("origin", base.parse().unwrap());
        let (mut socket, _) = tokio_tungstenite::connect_async_with_config(request, None, true).await.unwrap();
        round_trip(&mut socket, "warm").await;
        held.push((id, token.clone(), socket));
    }
    let (after, _) = server.rss_kb();
    println!(
        "server RSS: {} MB before, {} MB with {OPEN_SESSIONS} open sessions (page loaded, a kernel's socket open): {:.0} KB per session",
        before / 1024,
        after / 1024,
        (after.saturating_sub(before)) as f64 / OPEN_SESSIONS as f64
    );
    for (id, token, socket) in held {
        drop(socket);
        end(&client, &base, &token, id).await;
    }
    server.stop();
}

fn socket_of(root: &Path, id: i64) -> PathBuf {
    jpu_share::executor::layout::Layout::new(root).output_dir(id).join(".jpu-session.sock")
}

async fn start(client: &reqwest::Client, base: &str, token: &str) -> i64 {
    let resp = client
        .post(format!("{base}/v1/sessions"))
        .bearer_auth(token)
        .json(&json!({"app": "jupyterlab", "num_gpus": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
    resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

async fn end(client: &reqwest::Client, base: &str, token: &str, id: i64) {
    client.post(format!("{base}/v1/jobs/{id}/cancel")).bearer_auth(token).send().await.unwrap();
    wait(client, base, token, id, |j| j["ended_at"].is_string()).await;
}

async fn wait(client: &reqwest::Client, base: &str, token: &str, id: i64, done: impl Fn(&Value) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let job: Value =
            client.get(format!("{base}/v1/jobs/{id}")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        if done(&job) {
            return;
        }
        assert!(Instant::now() < deadline && !(job["ended_at"].is_string()), "session {id}: {job}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn get_direct(socket: &Path, path: &str) {
    let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let request = hyper::Request::get(path).header("host", "localhost").body(Empty::<Bytes>::new()).unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert!(response.status().is_success());
    response.into_body().collect().await.unwrap();
}

/// A kernel, started through the proxy as a page would (Jupyter's
/// `_xsrf` cookie from its page, echoed in a header).
async fn new_kernel(client: &reqwest::Client, base: &str, token: &str, id: i64) -> String {
    let page = client.get(format!("{base}/s/{id}/lab")).bearer_auth(token).send().await.unwrap();
    let xsrf = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|c| c.to_str().ok())
        .find_map(|c| c.strip_prefix("_xsrf=").map(|v| v.split(';').next().unwrap().to_string()))
        .expect("_xsrf");
    let kernel: Value = client
        .post(format!("{base}/s/{id}/api/kernels"))
        .bearer_auth(token)
        .header("X-XSRFToken", xsrf)
        .header("Origin", base)
        .json(&json!({"name": "python3"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    kernel["id"].as_str().expect("kernel id").to_string()
}

async fn round_trip<S>(socket: &mut tokio_tungstenite::WebSocketStream<S>, msg_id: &str) -> Duration
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let execute = json!({
        "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "b", "session": "b",
                   "date": "2026-12-05T00:00:00Z", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": "1", "silent": false, "store_history": false, "user_expressions": {},
                    "allow_stdin": false, "stop_on_error": true}
    });
    let started = Instant::now();
    socket.send(Message::text(execute.to_string())).await.unwrap();
    while let Some(Ok(message)) = socket.next().await {
        let Message::Text(text) = message else { continue };
        let m: Value = serde_json::from_str(&text).unwrap();
        if m["parent_header"]["msg_id"] == msg_id && m["header"]["msg_type"] == "execute_reply" {
            return started.elapsed();
        }
    }
    panic!("the kernel's socket closed");
}
