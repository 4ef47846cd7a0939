//! What the HTTP benchmarks share: the real server built on port 0 over a
//! temp SQLite file, and a token for the demo user.

#[allow(dead_code)] // the benches that start the binary
pub mod process;

#[allow(dead_code)] // the campus sign-in bench
pub mod campus;

use jpu_share::config::Settings;
use jpu_share::startup::{Application, BootstrapPasswords};
use serde_json::{json, Value};

pub const DEMO_PASSWORD: &str = "bench-demo-password";
#[allow(dead_code)] // not every bench signs in as admin
pub const ADMIN_PASSWORD: &str = "bench-admin-password";

/// The server, built but not yet running, and its base URL.
#[allow(dead_code)] // not every bench changes settings
pub async fn build_server(dir: &std::path::Path) -> (Application, String) {
    build_server_with(dir, |_| {}).await
}

/// [`build_server`] with changed settings.
pub async fn build_server_with(dir: &std::path::Path, change: impl FnOnce(&mut Settings)) -> (Application, String) {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    settings.database.url = format!("sqlite://{}", dir.join("jpu.db").display());
    settings.executor.output_root = dir.join("jobs");
    settings.storage.root = dir.join("storage");
    settings.cancel.grace_seconds = 2;
    change(&mut settings);
    let bootstrap = BootstrapPasswords { admin: Some(ADMIN_PASSWORD.into()), demo: Some(DEMO_PASSWORD.into()) };
    let app = Application::build(settings, bootstrap).await.expect("server builds");
    let base = format!("http://{}", app.local_addr().expect("bound"));
    (app, base)
}

#[allow(dead_code)] // submit_load signs in its own users
pub async fn demo_token(client: &reqwest::Client, base: &str) -> String {
    token(client, base, "demo", DEMO_PASSWORD).await
}

/// A new API token for `username`.
pub async fn token(client: &reqwest::Client, base: &str, username: &str, password: &str) -> String {
    let token: Value = client
        .post(format!("{base}/v1/auth/token"))
        // a sign-in must come from our own origin (the guard against login CSRF)
        .header("origin", base)
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    token["token"].as_str().unwrap_or_else(|| panic!("sign-in of {username}: {token}")).to_string()
}

/// Submits a one-GPU job running `command`: its id.
#[allow(dead_code)] // the benches that time jobs
pub async fn submit(client: &reqwest::Client, base: &str, token: &str, name: &str, command: &str) -> i64 {
    let job: Value = client
        .post(format!("{base}/v1/jobs"))
        .bearer_auth(token)
        .json(&json!({"name": name, "command": command, "num_gpus": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    job["id"].as_i64().unwrap_or_else(|| panic!("submit refused: {job}"))
}

/// Polls the job at `url` every 2 ms until its state is one of `states`
/// (`within` at most).
#[allow(dead_code)] // the benches that time jobs
pub async fn wait_state(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    states: &[&str],
    within: std::time::Duration,
) {
    let deadline = std::time::Instant::now() + within;
    loop {
        let job: Value = client.get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        if states.contains(&job["state"].as_str().unwrap_or_default()) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{url} never reached {states:?}: {job}");
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

/// p50, p99 and max of samples, in ms (sorts them).
#[allow(dead_code)] // the benches that time requests
pub fn spread(samples: &mut [std::time::Duration]) -> String {
    samples.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let n = samples.len();
    format!(
        "p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(samples[n / 2]),
        ms(samples[n * 99 / 100]),
        ms(samples[n - 1])
    )
}
