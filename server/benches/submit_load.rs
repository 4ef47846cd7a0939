//! Submit throughput and memory, against the real `jpu-share` binary (a
//! separate process, release build) on a temp SQLite file with the local
//! executor and the default 5 s cycle:
//!
//! 1. `POST /v1/jobs` from 64 concurrent clients (64 researchers in 8
//!    labs) for 10 s: jobs/s and latency p50/p90/p99. The scheduler loop
//!    runs throughout (woken by every submit) and the jobs (`true`) run
//!    on the demo GPUs, as in production.
//! 2. The database topped up to 100,000 jobs (90 % ended, 10 % waiting),
//!    the server restarted on it, the queue ranked and read through
//!    `GET /v1/queue` and the `/queue` page: the server's resident memory.
//!
//! Run: `cargo bench -p server --bench submit_load`. The per-user limit
//! of unfinished jobs (policy: 100) is raised for the load phase, which
//! would otherwise refuse a client's 101st job with 429.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

const CLIENTS: usize = 64;
const LABS: usize = 8;
const LOAD_FOR: Duration = Duration::from_secs(10);
const TOTAL_JOBS: i64 = 100_000;
mod support;

use support::process::Server;

const ADMIN_PASSWORD: &str = support::ADMIN_PASSWORD;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let client = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().unwrap();
    let server = Server::start(dir.path(), &client, &[("JPU__SCHEDULER__MAX_UNFINISHED_PER_USER", "1000000")]).await;
    let base = server.base.clone();
    let admin = support::token(&client, &base, "admin", ADMIN_PASSWORD).await;
    for lab in 0..LABS {
        client
            .post(format!("{base}/v1/admin/labs"))
            .bearer_auth(&admin)
            .json(&json!({"name": format!("lab-{lab}")}))
            .send()
            .await
            .unwrap();
    }
    let mut tokens = Vec::new();
    for user in 0..CLIENTS {
        let (name, password) = (format!("user-{user:02}"), format!("password-of-{user:02}"));
        let body = json!({"username": name, "password": password, "lab": format!("lab-{}", user % LABS), "role": "researcher"});
        let resp = client.post(format!("{base}/v1/admin/users")).bearer_auth(&admin).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 201);
        tokens.push(support::token(&client, &base, &name, &password).await);
    }

    // 1. submit load
    println!("submit load: {CLIENTS} clients for {} s ...", LOAD_FOR.as_secs());
    let start = Instant::now();
    let stop_at = start + LOAD_FOR;
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = tokens
        .into_iter()
        .enumerate()
        .map(|(i, token)| {
            let (client, base, errors) = (client.clone(), base.clone(), errors.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut n = 0u64;
                while Instant::now() < stop_at {
                    let body = json!({"name": format!("load-{i}-{n}"), "command": "true", "num_gpus": 1 + (n % 2), "time_limit_minutes": 5});
                    let sent = Instant::now();
                    let resp = client.post(format!("{base}/v1/jobs")).bearer_auth(&token).json(&body).send().await;
                    latencies.push(sent.elapsed());
                    if !matches!(resp, Ok(ref r) if r.status() == 201) {
                        errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    n += 1;
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let elapsed = start.elapsed();
    latencies.sort();
    let errors = errors.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "POST /v1/jobs: {} requests in {:.1} s = {:.0} jobs/s; latency p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms; {} not 201",
        latencies.len(),
        elapsed.as_secs_f64(),
        (latencies.len() - errors) as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.9).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
        errors
    );
    // what the server did meanwhile, from its own /metrics
    let metrics = client.get(format!("{base}/metrics")).bearer_auth(&admin).send().await.unwrap().text().await.unwrap();
    let metric = |name: &str| -> f64 {
        metrics.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok())).unwrap_or(0.0)
    };
    println!(
        "  {:.0} submit batches of {:.1} jobs on average; {:.0} scheduler cycles, busy {:.1} s of the {:.0} s",
        metric("submit_batch_jobs_count"),
        metric("submit_batch_jobs_sum") / metric("submit_batch_jobs_count").max(1.0),
        metric("scheduler_cycle_seconds_count"),
        metric("scheduler_cycle_seconds_sum"),
        elapsed.as_secs_f64()
    );
    let phases: Vec<String> = ["ends", "inventory", "decide", "starts", "backfill", "cancels"]
        .iter()
        .map(|p| format!("{p} {:.2} s", metric(&format!("scheduler_phase_seconds_sum{{phase=\"{p}\"}}"))))
        .collect();
    println!("  cycle phases: {}; submit batches busy {:.1} s", phases.join(", "), metric("submit_batch_seconds_sum"));
    let (rss, _) = server.rss_kb();
    println!("server RSS after the load: {:.0} MB", rss as f64 / 1024.0);
    server.stop();

    // 2. memory with 100,000 jobs in the database
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("jpu.db").display())).await.unwrap();
    let have: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs").fetch_one(&pool).await.unwrap();
    let waiting: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE state IN ('GLOBAL_QUEUE_WAIT','USER_QUEUE_WAIT')")
            .fetch_one(&pool)
            .await
            .unwrap();
    let add = (TOTAL_JOBS - have).max(0);
    let add_waiting = (TOTAL_JOBS / 10 - waiting).clamp(0, add);
    // copies of the last job: ended ones with a finished attempt's fields, and waiting ones
    let copy = |state: &'static str, n: i64| {
        let ended = state == "COMPLETED";
        format!(
            "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < {n})
             INSERT INTO jobs (name, user_id, lab_id, state, command, num_gpus, env_json, time_limit_minutes,
                               submitted_at, queue_entered_at, started_at, ended_at, exit_code, usage_tflop_s, node, tier, gpu_indices)
             SELECT 'filler-' || k.i, j.user_id, j.lab_id, '{state}', 'python train.py --epochs 10', j.num_gpus, '{{}}', 60,
                    j.submitted_at, j.submitted_at, {s}, {e}, {x}, {u}, {nd}, {t}, {g}
             FROM k, (SELECT * FROM jobs ORDER BY id DESC LIMIT 1) j",
            s = if ended { "j.submitted_at" } else { "NULL" },
            e = if ended { "j.submitted_at + 60000" } else { "NULL" },
            x = if ended { "0" } else { "NULL" },
            u = if ended { "4956.0" } else { "0" },
            nd = if ended { "'node-4090'" } else { "NULL" },
            t = if ended { "'rtx4090'" } else { "NULL" },
            g = if ended { "'0'" } else { "NULL" },
        )
    };
    sqlx::query(&copy("GLOBAL_QUEUE_WAIT", add_waiting)).execute(&pool).await.unwrap();
    sqlx::query(&copy("COMPLETED", add - add_waiting)).execute(&pool).await.unwrap();
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs").fetch_one(&pool).await.unwrap();
    let waiting: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE state IN ('GLOBAL_QUEUE_WAIT','USER_QUEUE_WAIT')")
            .fetch_one(&pool)
            .await
            .unwrap();
    pool.close().await;

    let server = Server::start(dir.path(), &client, &[("JPU__SCHEDULER__MAX_UNFINISHED_PER_USER", "1000000")]).await;
    let base = server.base.clone();
    let (idle_rss, _) = server.rss_kb();
    let user = support::token(&client, &base, "user-00", "password-of-00").await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("jpu.db").display())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ranked: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE rank IS NOT NULL").fetch_one(&pool).await.unwrap();
        if ranked > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the queue was never ranked");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for _ in 0..5 {
        let queue = client.get(format!("{base}/v1/queue")).bearer_auth(&user).send().await.unwrap();
        assert_eq!(queue.status(), 200);
        let _ = queue.bytes().await.unwrap();
        let jobs = client.get(format!("{base}/v1/jobs?limit=200")).bearer_auth(&user).send().await.unwrap();
        assert_eq!(jobs.status(), 200);
    }
    let (rss, peak) = server.rss_kb();
    println!(
        "{total} jobs in the database ({waiting} waiting): server RSS {:.0} MB at start, {:.0} MB after ranking and serving the queue (peak {:.0} MB)",
        idle_rss as f64 / 1024.0,
        rss as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    server.stop();
}
