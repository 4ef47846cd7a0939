//! Submit → start latency with an idle GPU, through the real server (port
//! 0, temp SQLite file) with the default 5 s cycle, so only the submit's
//! wake-up can make it fast:
//!
//! - local executor: submit → `RUNNING` (real `bash` processes);
//! - Slurm (when `SLURM_CONF` names a cluster, e.g. after
//!   `eval "$(.ci/slurm-cluster start)"`): Slurm's own start latency
//!   (`sbatch` → the job's first line runs) against ours (submit → the
//!   same first line runs, and submit → `RUNNING` in the API).
//!
//! Run: `cargo bench -p server --bench start_latency`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod support;

const SAMPLES: usize = 40;
const SLURM_SAMPLES: usize = 20;
/// The longest a job may take to reach a state.
const WAIT: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() {
    local().await;
    if std::env::var_os("SLURM_CONF").is_some() {
        slurm().await;
    } else {
        println!("(no SLURM_CONF: Slurm latency not measured; start the test cluster with .ci/slurm-cluster start)");
    }
}

async fn local() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (app, base) = support::build_server(dir.path()).await;
    tokio::spawn(app.run_until(std::future::pending()));
    let client = reqwest::Client::new();
    let token = support::demo_token(&client, &base).await;
    let mut latencies = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES {
        let started = Instant::now();
        let id = support::submit(&client, &base, &token, &format!("latency-{i}"), "true").await;
        let url = format!("{base}/v1/jobs/{id}");
        support::wait_state(&client, &url, &token, &["RUNNING", "COMPLETED"], WAIT).await;
        latencies.push(started.elapsed());
        // let it finish so the next one finds an idle GPU
        support::wait_state(&client, &url, &token, &["COMPLETED"], WAIT).await;
    }
    println!("submit -> RUNNING on the local executor, {SAMPLES} jobs, 5 s cycle: {}", spread(&mut latencies));
}

async fn slurm() {
    // Slurm alone: sbatch, then the job's first line writes a file
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut raw = Vec::with_capacity(SLURM_SAMPLES);
    for i in 0..SLURM_SAMPLES {
        let marker = scratch.path().join(format!("raw-{i}"));
        let started = Instant::now();
        let out = std::process::Command::new("sbatch")
            .args(["--parsable", "--partition=rtx4090", "--gres=gpu:rtx4090:1", "--output=/dev/null"])
            .arg(format!("--wrap=touch {}", marker.display()))
            .output()
            .expect("sbatch runs");
        assert!(out.status.success(), "sbatch: {}", String::from_utf8_lossy(&out.stderr));
        wait_file(&marker).await;
        raw.push(started.elapsed());
        wait_slurm_idle().await;
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let (app, base) =
        support::build_server_with(dir.path(), |s| s.executor.kind = jpu_share::config::ExecutorKind::Slurm).await;
    tokio::spawn(app.run_until(std::future::pending()));
    let client = reqwest::Client::new();
    // Slurm runs jobs as their user's own uid: demo is the host account
    // the test cluster makes (`jpu-test-a`, 3901)
    let admin = support::token(&client, &base, "admin", support::ADMIN_PASSWORD).await;
    let resp = client
        .patch(format!("{base}/v1/admin/users/demo"))
        .bearer_auth(&admin)
        .json(&json!({"unix_uid": 3901}))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "set demo's uid: {}", resp.status());
    let token = support::demo_token(&client, &base).await;
    // the first cycles read Slurm's nodes in as placements
    wait_placements(&client, &base, &token).await;
    let (mut running, mut ran) = (Vec::new(), Vec::new());
    for i in 0..SLURM_SAMPLES {
        let started = Instant::now();
        let id = support::submit(
            &client,
            &base,
            &token,
            &format!("slurm-latency-{i}"),
            r#"touch "$JOB_OUTPUT_DIR/started""#,
        )
        .await;
        let url = format!("{base}/v1/jobs/{id}");
        support::wait_state(&client, &url, &token, &["RUNNING", "COMPLETED"], WAIT).await;
        running.push(started.elapsed());
        wait_file(&dir.path().join("jobs").join(id.to_string()).join("started")).await;
        ran.push(started.elapsed());
        support::wait_state(&client, &url, &token, &["COMPLETED"], WAIT).await;
        wait_slurm_idle().await;
    }
    println!("Slurm alone, sbatch -> job runs, {SLURM_SAMPLES} jobs: {}", spread(&mut raw));
    println!("jpu-share on Slurm, submit -> job runs: {}", spread(&mut ran));
    println!("jpu-share on Slurm, submit -> RUNNING in the API: {}", spread(&mut running));
}

fn spread(samples: &mut [Duration]) -> String {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let n = samples.len();
    format!("p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms", ms(samples[n / 2]), ms(samples[n * 9 / 10]), ms(samples[n - 1]))
}

async fn wait_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Until Slurm runs nothing (so every sample starts on an idle GPU).
async fn wait_slurm_idle() {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = std::process::Command::new("squeue").args(["-h", "-o", "%i"]).output().expect("squeue runs");
        if out.stdout.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        assert!(Instant::now() < deadline, "Slurm jobs never ended");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_placements(client: &reqwest::Client, base: &str, token: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let p: Value =
            client.get(format!("{base}/v1/placements")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        if p.as_array().is_some_and(|a| {
            a.iter().any(|x| x["node"].as_str().is_some_and(|n| n.starts_with("s4090")) && x["idle"].as_u64() > Some(0))
        }) {
            return;
        }
        assert!(Instant::now() < deadline, "Slurm's nodes never became placements: {p}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
