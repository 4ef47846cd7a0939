//! 300 sign-ins at once for made-up users, each from its own address
//! (127.0.1.x / 127.0.2.x), against the release binary: the server's peak
//! resident memory and how long `/healthz` takes meanwhile. argon2id takes
//! ~19 MiB per hash; unbounded, this burst took the server to 1.8 GB.
//!
//! Run: `cargo bench -p server --bench sign_in_burst`.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use serde_json::json;

mod support;

use support::process::Server;

const SIGN_INS: usize = 300;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let client = reqwest::Client::new();
    let server = Server::start(dir.path(), &client, &[]).await;
    let (_, idle) = server.rss_kb();
    let clients: Vec<reqwest::Client> = (0..SIGN_INS)
        .map(|i| {
            reqwest::Client::builder()
                .local_address(IpAddr::from([127, 0, 1 + (i / 250) as u8, 1 + (i % 250) as u8]))
                .build()
                .unwrap()
        })
        .collect();
    let base = server.base.clone();
    let burst = clients.iter().enumerate().map(|(i, c)| {
        let base = base.clone();
        async move {
            let body = json!({"username": format!("nobody-{i}"), "password": "password123"});
            c.post(format!("{base}/v1/auth/token")).json(&body).send().await.map(|r| r.status().as_u16()).unwrap_or(0)
        }
    });
    let health = async {
        let mut times = Vec::new();
        for _ in 0..30 {
            let asked = Instant::now();
            let ok = client.get(format!("{base}/healthz")).send().await.is_ok_and(|r| r.status().is_success());
            assert!(ok, "/healthz failed during the burst");
            times.push(asked.elapsed());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        times.sort();
        times
    };
    let started = Instant::now();
    let (statuses, times) = tokio::join!(futures_util::future::join_all(burst), health);
    let took = started.elapsed();
    let count = |code: u16| statuses.iter().filter(|s| **s == code).count();
    let (_, peak) = server.rss_kb();
    println!(
        "{SIGN_INS} sign-ins at once in {:.1} s: {} checked (401), {} told to retry (429), {} other",
        took.as_secs_f64(),
        count(401),
        count(429),
        SIGN_INS - count(401) - count(429)
    );
    println!(
        "server peak RSS {} MB (idle {} MB); /healthz meanwhile p50 {:.1} ms, max {:.1} ms",
        peak / 1024,
        idle / 1024,
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
    server.stop();
}
