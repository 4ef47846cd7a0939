//! Submit → RUNNING latency on the local executor with an idle GPU: the
//! real server (port 0, temp SQLite file, real `bash` processes) with the
//! default 5 s cycle, so only the submit's wake-up can make it fast.
//! Run: `cargo bench -p server --bench start_latency`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;

const SAMPLES: usize = 40;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (app, base) = support::build_server(dir.path()).await;
    tokio::spawn(app.run_until(std::future::pending()));

    let client = reqwest::Client::new();
    let token = support::demo_token(&client, &base).await;

    let mut latencies = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES {
        let started = Instant::now();
        let job: Value = client
            .post(format!("{base}/v1/jobs"))
            .bearer_auth(&token)
            .json(&json!({"name": format!("latency-{i}"), "command": "true", "num_gpus": 1}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = job["id"].as_i64().unwrap();
        let url = format!("{base}/v1/jobs/{id}");
        wait_state(&client, &url, &token, &["RUNNING", "COMPLETED"]).await;
        latencies.push(started.elapsed());
        // let it finish so the next one finds an idle GPU
        wait_state(&client, &url, &token, &["COMPLETED"]).await;
    }
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "submit -> RUNNING on the local executor, {SAMPLES} jobs, 5 s cycle: p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        ms(latencies[SAMPLES / 2]),
        ms(latencies[SAMPLES * 9 / 10]),
        ms(latencies[SAMPLES - 1])
    );
}

/// Polls the job every 2 ms until its state is one of `states` (30 s at most).
async fn wait_state(client: &reqwest::Client, url: &str, token: &str, states: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let job: Value = client.get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        if states.contains(&job["state"].as_str().unwrap_or_default()) {
            return;
        }
        assert!(Instant::now() < deadline, "{url} never reached {states:?}: {job}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
