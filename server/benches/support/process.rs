//! The release `jpu-share` binary run as its own process, for benches that
//! measure what only a process shows (resident memory).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The release `jpu-share` binary as its own process.
pub struct Server {
    pub base: String,
    child: Child,
}

/// A process's resident memory now, in KiB (0 once it is gone).
pub fn rss_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

impl Server {
    /// Starts the binary on `dir`'s database (with `env` besides) and
    /// waits for /healthz.
    pub async fn start(dir: &std::path::Path, client: &reqwest::Client, env: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(env!("CARGO_BIN_EXE_jpu-share"))
            .arg("serve")
            .env("JPU__SERVER__BIND", format!("127.0.0.1:{port}"))
            .env("JPU__DATABASE__URL", format!("sqlite://{}", dir.join("jpu.db").display()))
            .env("JPU__EXECUTOR__OUTPUT_ROOT", dir.join("jobs"))
            .env("JPU__SERVER__SITE_ROOT", dir.join("site"))
            .env("JPU__CANCEL__GRACE_SECONDS", "1")
            .env("JPU_ADMIN_PASSWORD", super::ADMIN_PASSWORD)
            .env("JPU_DEMO_PASSWORD", super::DEMO_PASSWORD)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .spawn()
            .expect("jpu-share starts");
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while client.get(format!("{base}/healthz")).send().await.map(|r| !r.status().is_success()).unwrap_or(true) {
            assert!(Instant::now() < deadline, "server did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Server { child, base }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// (resident, peak resident) in KiB.
    pub fn rss_kb(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// `kill -9`.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn stop(mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}
