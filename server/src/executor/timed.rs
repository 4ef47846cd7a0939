//! A stand-in executor for tests of the loop: an attempt "runs" for
//! `JPU_SIM_SECONDS` (from its env, default 1 s), then ends with exit code
//! `JPU_SIM_EXIT` (default 0) and output `JPU_SIM_OUTPUT`, or with
//! `JPU_SIM_END=host_oom` as a host-RAM kill. It starts no
//! process; the real executors do. It wakes the loop when attempts end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::{Executor, ExecutorError, Finished, StartRequest};
use crate::policy::oom::EndSignal;
use crate::policy::JobId;

#[derive(Default)]
struct Inner {
    running: HashMap<(JobId, u32), JoinHandle<()>>,
    finished: Vec<Finished>,
    /// Every start request, in order (tests inspect it).
    started: Vec<StartRequest>,
    refuse: Option<String>,
    /// Attempts started with `JPU_SIM_IGNORE_CANCEL` (as on a node that
    /// lost contact): cancels never end them.
    deaf: std::collections::HashSet<(JobId, u32)>,
}

#[derive(Clone)]
pub struct TimedExecutor {
    inner: Arc<Mutex<Inner>>,
    wake: Arc<Notify>,
}

impl TimedExecutor {
    pub fn new(wake: Arc<Notify>) -> Self {
        Self { inner: Arc::new(Mutex::new(Inner::default())), wake }
    }

    pub fn started(&self) -> Vec<StartRequest> {
        self.lock().started.clone()
    }

    /// Makes every `start` fail with this message until called with `None`.
    pub fn refuse(&self, message: Option<&str>) {
        self.lock().refuse = message.map(str::to_string);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finish(&self, job: JobId, attempt: u32, end: EndSignal, log_tail: String) {
        let mut inner = self.lock();
        if inner.running.remove(&(job, attempt)).is_some() {
            inner.finished.push(Finished { job, attempt, end, log_tail, ended_ms: None });
            drop(inner);
            self.wake.notify_one();
        }
    }
}

fn env_value<'a>(req: &'a StartRequest, key: &str) -> Option<&'a str> {
    req.env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[async_trait::async_trait]
impl Executor for TimedExecutor {
    async fn start(&self, req: StartRequest) -> Result<(), ExecutorError> {
        let key = (req.job, req.attempt);
        let mut inner = self.lock();
        if let Some(message) = &inner.refuse {
            return Err(ExecutorError::Refused(message.clone()));
        }
        if inner.running.contains_key(&key) {
            return Ok(());
        }
        let seconds: f64 = env_value(&req, "JPU_SIM_SECONDS").and_then(|v| v.parse().ok()).unwrap_or(1.0);
        let exit: i32 = env_value(&req, "JPU_SIM_EXIT").and_then(|v| v.parse().ok()).unwrap_or(0);
        let output = env_value(&req, "JPU_SIM_OUTPUT").unwrap_or_default().to_string();
        let host_oom = env_value(&req, "JPU_SIM_END") == Some("host_oom");
        if env_value(&req, "JPU_SIM_IGNORE_CANCEL").is_some() {
            inner.deaf.insert(key);
        }
        let limit = req.time_limit;
        let me = self.clone();
        let handle = tokio::spawn(async move {
            let run = Duration::from_secs_f64(seconds.max(0.0));
            if run > limit {
                tokio::time::sleep(limit).await;
                me.finish(key.0, key.1, EndSignal::TimeLimit, output);
            } else {
                tokio::time::sleep(run).await;
                let end = if host_oom { EndSignal::HostOomKilled } else { EndSignal::Exited(exit) };
                me.finish(key.0, key.1, end, output);
            }
        });
        inner.running.insert(key, handle);
        inner.started.push(req);
        Ok(())
    }

    async fn take_finished(&self) -> Result<Vec<Finished>, ExecutorError> {
        Ok(std::mem::take(&mut self.lock().finished))
    }

    async fn cancel(&self, job: JobId, attempt: u32, _grace: Duration) -> Result<(), ExecutorError> {
        if self.lock().deaf.contains(&(job, attempt)) {
            return Ok(());
        }
        if let Some(handle) = self.lock().running.get(&(job, attempt)) {
            handle.abort();
        }
        self.finish(job, attempt, EndSignal::Cancelled, String::new());
        Ok(())
    }
}
