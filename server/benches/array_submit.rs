//! A 1,000-element array against the real `jpu-share` binary (release,
//! its own process, local executor, the default 5 s cycle): how long
//! `POST /v1/jobs` with `"array": "0-999%10"` takes (one transaction),
//! and how long the scheduler cycle it wakes takes, from the server's
//! own `/metrics`. Each round is a new researcher whose array is
//! cancelled afterwards, so every round starts from the same queue.
//!
//! Run: `cargo bench -p server --bench array_submit`. The per-user limit
//! of unfinished jobs (policy: 100) is raised to 1,000 for it.

use std::time::{Duration, Instant};

use serde_json::json;

mod support;

use support::process::Server;

const ROUNDS: usize = 10;

/// (count, sum in seconds) of a histogram in the Prometheus text.
fn histogram(metrics: &str, name: &str) -> (f64, f64) {
    let value = |suffix: &str| {
        let key = format!("{name}{suffix} ");
        metrics.lines().find_map(|l| l.strip_prefix(&key).and_then(|v| v.trim().parse().ok())).unwrap_or(0.0)
    };
    (value("_count"), value("_sum"))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::new();
    let server = Server::start(dir.path(), &client, &[("JPU__SCHEDULER__MAX_UNFINISHED_PER_USER", "1000")]).await;
    let base = server.base.clone();
    let admin = support::token(&client, &base, "admin", support::ADMIN_PASSWORD).await;
    let metrics = || async {
        client.get(format!("{base}/metrics")).bearer_auth(&admin).send().await.unwrap().text().await.unwrap()
    };
    let (mut submits, mut cycles) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (name, password) = (format!("sweeper-{round}"), format!("password-of-{round}"));
        let body = json!({"username": name, "password": password, "lab": "demo-lab", "role": "researcher"});
        let resp = client.post(format!("{base}/v1/admin/users")).bearer_auth(&admin).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 201);
        let token = support::token(&client, &base, &name, &password).await;
        let before = histogram(&metrics().await, "scheduler_cycle_seconds");
        let array = json!({"name": "sweep", "command": "sleep 600", "num_gpus": 1, "array": "0-999%10"});
        let began = Instant::now();
        let resp = client.post(format!("{base}/v1/jobs")).bearer_auth(&token).json(&array).send().await.unwrap();
        submits.push(began.elapsed());
        assert_eq!(resp.status(), 201);
        let answer: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(answer["jobs"].as_array().unwrap().len(), 1000);
        // the submit wakes a cycle; wait for it to be recorded
        let deadline = Instant::now() + Duration::from_secs(10);
        let after = loop {
            let now = histogram(&metrics().await, "scheduler_cycle_seconds");
            if now.0 > before.0 {
                break now;
            }
            assert!(Instant::now() < deadline, "no cycle after the submit");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        cycles.push(Duration::from_secs_f64((after.1 - before.1) / (after.0 - before.0)));
        let id = answer["array_id"].as_i64().unwrap();
        let resp = client.post(format!("{base}/v1/arrays/{id}/cancel")).bearer_auth(&token).send().await.unwrap();
        assert_eq!(resp.status(), 202);
    }
    submits.sort();
    cycles.sort();
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    println!(
        "1,000-element array, {ROUNDS} rounds: submit median {:.1} ms (max {:.1}); first cycle after it median {:.1} ms (max {:.1})",
        ms(&submits[ROUNDS / 2]),
        ms(submits.last().unwrap()),
        ms(&cycles[ROUNDS / 2]),
        ms(cycles.last().unwrap())
    );
    server.stop();
}
