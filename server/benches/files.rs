//! Files through the site (#43), against the release binary run as its
//! own process (as root: each operation drops to the person's uid in the
//! file helper, as in production):
//!
//! - listing a folder of 10,000 files through `GET /v1/files` (p50, p99);
//! - a 1 GiB upload and download through `/v1/files`, against `cp` of
//!   the same file on the same disk (with and without `sync`: an upload
//!   is on disk before its `201`);
//! - the server's resident memory during the upload, over its level
//!   before it (the body is streamed, never held);
//! - the usage scan (`services::storage::disk_usage`, what the background
//!   scan runs) of a tree of 100,000 files.
//!
//! Run: `cargo bench -p server --bench files` (as root).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod support;

const LISTED: usize = 10_000;
const LISTINGS: usize = 50;
const BIG: u64 = 1 << 30;
const SCANNED: usize = 100_000;

#[tokio::main]
async fn main() {
    if !nix::unistd::geteuid().is_root() {
        println!("(files not measured: needs root, as the server runs in production)");
        return;
    }
    // on the disk the build uses (a tmpfs /tmp would flatter both sides)
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tempfile::tempdir_in(scratch).expect("temp dir");
    let storage = dir.path().join("storage");
    let client = reqwest::Client::new();
    let env = [("JPU__STORAGE__ROOT", storage.to_str().unwrap()), ("JPU__STORAGE__MAX_UPLOAD_MB", "2048")];
    let server = support::process::Server::start(dir.path(), &client, &env).await;
    let base = server.base.clone();
    let token = support::demo_token(&client, &base).await;

    // 1. a folder of 10,000 files, listed
    let made = client.post(format!("{base}/v1/files/home/many?mkdir")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(made.status(), 201);
    let many = storage.join("home/demo/many");
    for i in 0..LISTED {
        std::fs::write(many.join(format!("sample-{i:05}.json")), b"{}").unwrap();
    }
    let mut listings = Vec::new();
    for _ in 0..LISTINGS {
        let t = Instant::now();
        let answer: Value = client
            .get(format!("{base}/v1/files/home/many/"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        listings.push(t.elapsed());
        assert_eq!(answer["entries"].as_array().map(Vec::len), Some(LISTED));
    }
    println!("GET /v1/files of a folder of {LISTED} files, {LISTINGS} times: {}", support::spread(&mut listings));

    // 2. 1 GiB up and down, against cp
    let source = dir.path().join("big.bin");
    {
        let mut block = vec![0u8; 1 << 20];
        for (i, b) in block.iter_mut().enumerate() {
            *b = (i.wrapping_mul(2654435761) >> 13) as u8;
        }
        let mut f = std::fs::File::create(&source).unwrap();
        for _ in 0..(BIG >> 20) {
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
    }
    let copy = dir.path().join("copy.bin");
    let t = Instant::now();
    assert!(std::process::Command::new("cp").arg(&source).arg(&copy).status().unwrap().success());
    let cp = t.elapsed();
    std::fs::remove_file(&copy).unwrap();
    let t = Instant::now();
    assert!(std::process::Command::new("cp").arg(&source).arg(&copy).status().unwrap().success());
    assert!(std::process::Command::new("sync").arg(&copy).status().unwrap().success());
    let cp_sync = t.elapsed();
    std::fs::remove_file(&copy).unwrap();

    let (before, _) = server.rss_kb();
    let peak = Arc::new(AtomicU64::new(before));
    let watching = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let (peak, watching) = (peak.clone(), watching.clone());
        let pid = server.pid();
        tokio::spawn(async move {
            while watching.load(Ordering::Relaxed) {
                peak.fetch_max(support::process::rss_of(pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let file = tokio::fs::File::open(&source).await.unwrap();
    let body = reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(file, 256 * 1024));
    let t = Instant::now();
    let up = client
        .put(format!("{base}/v1/files/home/big.bin"))
        .bearer_auth(&token)
        .header("content-length", BIG)
        .body(body)
        .send()
        .await
        .unwrap();
    let upload = t.elapsed();
    assert_eq!(up.status(), 201, "{:?}", up.text().await);
    watching.store(false, Ordering::Relaxed);
    sampler.await.unwrap();
    let grew_mb = peak.load(Ordering::Relaxed).saturating_sub(before) as f64 / 1024.0;

    let back = dir.path().join("back.bin");
    let t = Instant::now();
    let mut down = client.get(format!("{base}/v1/files/home/big.bin")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(down.status(), 200);
    let mut out = std::fs::File::create(&back).unwrap();
    let mut got = 0u64;
    while let Some(chunk) = down.chunk().await.unwrap() {
        out.write_all(&chunk).unwrap();
        got += chunk.len() as u64;
    }
    let download = t.elapsed();
    assert_eq!(got, BIG);
    let rate = |d: Duration| BIG as f64 / 1e6 / d.as_secs_f64();
    println!(
        "1 GiB: cp {:.0} MB/s (cp + sync {:.0} MB/s); upload {:.0} MB/s ({:.0} % of cp, {:.0} % of cp + sync); download {:.0} MB/s ({:.0} % of cp)",
        rate(cp),
        rate(cp_sync),
        rate(upload),
        100.0 * cp.as_secs_f64() / upload.as_secs_f64(),
        100.0 * cp_sync.as_secs_f64() / upload.as_secs_f64(),
        rate(download),
        100.0 * cp.as_secs_f64() / download.as_secs_f64(),
    );
    println!(
        "server resident memory during the 1 GiB upload: +{grew_mb:.1} MB over {:.1} MB before",
        before as f64 / 1024.0
    );
    server.stop();

    // 3. the usage scan of 100,000 files
    let tree = dir.path().join("tree");
    for d in 0..(SCANNED / 1000) {
        let sub = tree.join(format!("d{d:03}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..1000 {
            std::fs::write(sub.join(format!("f{f:04}")), b"x").unwrap();
        }
    }
    let mut scans = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let used = jpu_share::services::storage::disk_usage(&tree);
        scans.push(t.elapsed());
        assert!(used >= SCANNED as u64);
    }
    println!("usage scan of {SCANNED} files (warm cache), 5 times: {}", support::spread(&mut scans));
}
