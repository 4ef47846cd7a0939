//! LLM backfill instances as local process groups: the configured command
//! runs with `CUDA_VISIBLE_DEVICES` and a free `JPU_BACKFILL_PORT` to
//! serve on; output goes to `<root>/.backfill/<id>.log`. Reclaiming sends
//! SIGTERM to the group, waits the grace, then SIGKILL, and returns only
//! once the processes are gone, so research never shares a GPU with it.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::sync::Notify;

use super::layout::Layout;
use super::record::process_alive;
use super::{BackfillRequest, BackfillStarted, ExecutorError};

const POLL: Duration = Duration::from_millis(50);

#[derive(Default)]
struct Inner {
    running: HashSet<i64>,
    reclaiming: HashSet<i64>,
    ended: Vec<i64>,
}

#[derive(Clone)]
pub struct LocalBackfill {
    layout: Layout,
    wake: Arc<Notify>,
    inner: Arc<Mutex<Inner>>,
}

impl LocalBackfill {
    pub fn new(layout: Layout, wake: Arc<Notify>) -> Self {
        Self { layout, wake, inner: Arc::new(Mutex::new(Inner::default())) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn deploy(&self, req: BackfillRequest) -> Result<BackfillStarted, ExecutorError> {
        let refused = |e: std::io::Error| ExecutorError::Refused(format!("cannot start the backfill instance: {e}"));
        let dir = self.layout.root().join(".backfill");
        fs::create_dir_all(&dir).map_err(refused)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(refused)?.port();
        let log =
            OpenOptions::new().create(true).append(true).open(dir.join(format!("{}.log", req.id))).map_err(refused)?;
        let gpus: Vec<String> = req.gpus.iter().map(u32::to_string).collect();
        let child = tokio::process::Command::new(super::bash())
            .arg("-c")
            .arg(&req.command)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()))
            .env("HOME", &dir)
            .env("LANG", "C.UTF-8")
            .env("CUDA_VISIBLE_DEVICES", gpus.join(","))
            .env("JPU_BACKFILL_PORT", port.to_string())
            .env("JPU_NODE", &req.node)
            .env("JPU_TIER", &req.tier)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(refused)?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(refused)?;
        let pid = child.id().ok_or_else(|| ExecutorError::Refused("the instance exited at once".into()))?;
        self.lock().running.insert(req.id);
        self.watch(req.id, pid as i32, Some(child));
        Ok(BackfillStarted { executor_ref: pid.to_string(), endpoint: Some(format!("http://127.0.0.1:{port}")) })
    }

    fn watch(&self, id: i64, pgid: i32, child: Option<tokio::process::Child>) {
        let me = self.clone();
        tokio::spawn(async move {
            match child {
                Some(mut child) => {
                    let _ = child.wait().await;
                }
                None => {
                    while process_alive(pgid) {
                        tokio::time::sleep(POLL * 4).await;
                    }
                }
            }
            let mut inner = me.lock();
            inner.running.remove(&id);
            if !inner.reclaiming.remove(&id) {
                inner.ended.push(id);
                drop(inner);
                me.wake.notify_one();
            }
        });
    }

    pub async fn reclaim(&self, id: i64, executor_ref: &str, grace: Duration) -> Result<(), ExecutorError> {
        let Ok(pgid) = executor_ref.parse::<i32>() else {
            return Ok(()); // never started
        };
        self.lock().reclaiming.insert(id);
        let group = Pid::from_raw(pgid);
        let _ = killpg(group, Signal::SIGTERM);
        let asked = Instant::now();
        while process_alive(pgid) && asked.elapsed() < grace {
            tokio::time::sleep(POLL).await;
        }
        if process_alive(pgid) {
            let _ = killpg(group, Signal::SIGKILL);
            while process_alive(pgid) && asked.elapsed() < grace + Duration::from_secs(5) {
                tokio::time::sleep(POLL).await;
            }
        }
        if process_alive(pgid) {
            return Err(ExecutorError::Unavailable(format!("backfill instance {id} survived SIGKILL")));
        }
        Ok(())
    }

    pub fn take_ended(&self) -> Vec<i64> {
        std::mem::take(&mut self.lock().ended)
    }

    pub fn adopt(&self, id: i64, executor_ref: &str) -> bool {
        let Ok(pgid) = executor_ref.parse::<i32>() else { return false };
        if !process_alive(pgid) {
            return false;
        }
        if self.lock().running.insert(id) {
            self.watch(id, pgid, None);
        }
        true
    }
}
