//! The queue with 10,000 waiting jobs from 100 labs: `GET /v1/queue` and
//! the console's server-rendered `/queue` page (first 200 rows shown),
//! through the real server over a temp SQLite file. Every GPU of the demo
//! cluster runs a long job, so the queue stands still between the 5 s
//! cycles as on a busy cluster (each cycle still commits: the rank-1
//! reservation accrues). Run: `cargo bench -p server --bench queue_views`.

use std::time::{Duration, Instant};

use app::model::{JobState, Role};
use jpu_share::db;

mod support;

const JOBS: usize = 10_000;
const LABS: usize = 100;
const SAMPLES: usize = 60;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (app, base) = support::build_server(dir.path()).await;
    let pool = app.state().db.clone();

    // 10,000 waiting jobs of 100 labs (one user each), 2 GPUs each
    let mut tx = db::write_tx(&pool).await.unwrap();
    let now = jpu_share::clock::now_ms();
    let mut sleepers = Vec::new();
    for lab in 0..LABS {
        let lab_id = db::accounts::insert_lab(&mut tx, &format!("lab-{lab:03}"), now).await.unwrap();
        let user = db::accounts::NewUser {
            username: &format!("user-{lab:03}"),
            password_hash: "x",
            lab_id,
            role: Role::Researcher,
            unix_uid: None,
            max_concurrent: 1000,
            local: false,
        };
        let user_id = db::accounts::insert_user(&mut tx, user, now).await.unwrap();
        if lab == 0 {
            // the four demo GPUs' long jobs, first in line (lowest ids)
            for k in 0..4 {
                let job = db::jobs::NewJob {
                    name: &format!("busy-{k}"),
                    user_id,
                    lab_id,
                    state: JobState::GlobalQueueWait,
                    command: "exec sleep 600",
                    num_gpus: 1,
                    workspace: None,
                    env_json: "{}",
                    time_limit_minutes: 15,
                    min_vram_gb: 0,
                    pending_reason: None,
                    gated: false,
                    array: None,
                    session_app: None,
                };
                sleepers.push(db::jobs::insert(&mut tx, job, now).await.unwrap());
            }
        }
        for j in 0..JOBS / LABS {
            let job = db::jobs::NewJob {
                name: &format!("job-{lab}-{j}"),
                user_id,
                lab_id,
                state: JobState::GlobalQueueWait,
                command: "true",
                num_gpus: 2,
                workspace: None,
                env_json: "{}",
                time_limit_minutes: 60,
                min_vram_gb: 0,
                pending_reason: None,
                gated: false,
                array: None,
                session_app: None,
            };
            db::jobs::insert(&mut tx, job, now).await.unwrap();
        }
    }
    tx.commit().await.unwrap();
    tokio::spawn(app.run_until(std::future::pending()));

    // wait for the first cycle to rank them
    let ranked = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE rank IS NOT NULL")
            .fetch_one(pool.as_sqlite().expect("the bench runs on SQLite"))
            .await
            .unwrap();
        if n as usize >= JOBS {
            break;
        }
        assert!(ranked.elapsed() < Duration::from_secs(120), "never ranked ({n})");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let client = reqwest::Client::builder().cookie_store(true).build().unwrap();
    let token = support::demo_token(&client, &base).await;
    let login = client
        .post(format!("{base}/login"))
        // the cross-site guard wants the console's own origin on a sign-in
        .header("origin", &base)
        .form(&[("username", "demo"), ("password", support::DEMO_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert!(login.status().is_success() || login.status().is_redirection());

    let api = time(SAMPLES, || async {
        let resp = client.get(format!("{base}/v1/queue")).bearer_auth(&token).send().await.unwrap();
        assert!(resp.status().is_success());
        resp.bytes().await.unwrap().len()
    })
    .await;
    let page = time(SAMPLES, || async {
        let resp = client.get(format!("{base}/queue")).send().await.unwrap();
        assert!(resp.status().is_success());
        let body = resp.text().await.unwrap();
        assert!(body.contains("Showing the first 200 of"), "the page lists at most 200 rows");
        body.len()
    })
    .await;
    // every request right after a commit: the read the cache saves
    let fresh = time(SAMPLES / 3, || async {
        db::note_commit();
        let resp = client.get(format!("{base}/v1/queue")).bearer_auth(&token).send().await.unwrap();
        assert!(resp.status().is_success());
        resp.bytes().await.unwrap().len()
    })
    .await;
    // nothing outlives the bench
    let admin = support::token(&client, &base, "admin", support::ADMIN_PASSWORD).await;
    for id in &sleepers {
        client.post(format!("{base}/v1/jobs/{id}/cancel")).bearer_auth(&admin).send().await.unwrap();
    }
    let ended = Instant::now();
    for id in &sleepers {
        loop {
            let job: serde_json::Value = client
                .get(format!("{base}/v1/jobs/{id}"))
                .bearer_auth(&admin)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if job["state"] == "CANCELLED" {
                break;
            }
            assert!(ended.elapsed() < Duration::from_secs(60), "job {id} did not end: {job}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    println!("GET /v1/queue, {JOBS} waiting jobs: p50 {:.1} ms, p90 {:.1} ms ({} KB)", api.0, api.1, api.2 / 1024);
    println!("GET /v1/queue right after a commit (fresh read): p50 {:.1} ms, p90 {:.1} ms", fresh.0, fresh.1);
    println!(
        "GET /queue (SSR page), {JOBS} waiting jobs: p50 {:.1} ms, p90 {:.1} ms ({} KB)",
        page.0,
        page.1,
        page.2 / 1024
    );
}

/// (p50 ms, p90 ms, last response size) over `n` sequential requests.
async fn time<F, Fut>(n: usize, mut request: F) -> (f64, f64, usize)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let mut samples = Vec::with_capacity(n);
    let mut size = 0;
    for _ in 0..n {
        let started = Instant::now();
        size = request().await;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    samples.sort_by(f64::total_cmp);
    (samples[n / 2], samples[n * 9 / 10], size)
}
