//! The local executor, the embedded default: each attempt is a real
//! process group on this machine. A small bash wrapper (`attempt.sh`)
//! runs the job's script under `timeout` (time limit, then SIGKILL after
//! the grace) and, when the server is root, as the user's own uid, in its
//! own cgroup and PID and network namespaces (`contain`), with the job's
//! env applied only after the privilege drop; it writes start and exit
//! into the attempt's record. Running attempts are held to their log and
//! output limits (`limits`). Because the record is on disk and the wrapper is not killed
//! with the server, a restarted server adopts what still runs and reads
//! how the rest ended ([`Executor::recover`]).

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::Child;
use tokio::sync::Notify;

use super::attempt_files::{closed_ancestor, env_file, fnv1a, header, make_fifo, write_private};
use super::contain::{self, Containment};
use super::layout::{private_dir, Layout};
use super::limits;
use super::record::{AttemptRecord, RecordState};
use super::{BackfillRequest, BackfillStarted, Executor, ExecutorError, Finished, Observed, StartRequest};
use crate::policy::oom::EndSignal;
use crate::policy::JobId;

const WRAPPER: &str = include_str!("attempt.sh");
/// How often adopted attempts (not our children) are checked.
const POLL: Duration = Duration::from_millis(200);

type Key = (JobId, u32);

#[derive(Default)]
struct Inner {
    watching: HashSet<Key>,
    /// When SIGTERM was sent, per attempt being cancelled.
    cancels: HashMap<Key, Instant>,
    finished: Vec<Finished>,
}

struct Shared {
    layout: Layout,
    /// An ancestor of the output root that jobs running as their own
    /// uid cannot pass through (they could not write their output).
    unreachable: Option<std::path::PathBuf>,
    backfill: super::backfill_local::LocalBackfill,
    grace: Duration,
    apptainer: String,
    wake: Arc<Notify>,
    as_root: bool,
    containment: Containment,
    /// The binary whose `__enter-job` makes each job's namespaces.
    helper: Option<std::path::PathBuf>,
    /// A network namespace (loopback up) works here.
    net_namespace: bool,
    /// IPC and mount namespaces with private scratch dirs work here.
    private_scratch: bool,
    /// Where attempts are launched: a thread that denies what it starts
    /// user namespaces (unless allowed); made on first use.
    spawner: std::sync::OnceLock<super::spawner::Spawner>,
    allow_user_namespaces: bool,
    pids_per_gpu: u32,
    limits: super::limits::WriteLimits,
    gpu_devices: super::devices::GpuDevices,
    /// Tells this server's cgroups from another's on the same host.
    tag: u64,
    inner: Mutex<Inner>,
}

/// Limits of the local executor beyond what each request carries.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Processes one job may have per GPU (`executor.pids_per_gpu`).
    pub pids_per_gpu: u32,
    pub limits: super::limits::WriteLimits,
    /// Jobs may create user namespaces (`executor.allow_user_namespaces`).
    pub allow_user_namespaces: bool,
    /// The GPUs' device nodes, each job confined to its own.
    pub gpu_devices: super::devices::GpuDevices,
}

impl Default for LocalOptions {
    fn default() -> Self {
        Self {
            pids_per_gpu: 1024,
            limits: Default::default(),
            allow_user_namespaces: false,
            gpu_devices: Default::default(),
        }
    }
}

#[derive(Clone)]
pub struct LocalExecutor {
    shared: Arc<Shared>,
}

impl LocalExecutor {
    /// `wake` is notified whenever an attempt ends.
    /// `apptainer` runs attempts that have a workspace image.
    pub fn new(output_root: &Path, grace: Duration, apptainer: &str, wake: Arc<Notify>) -> Self {
        Self::with_options(output_root, grace, apptainer, wake, LocalOptions::default())
    }

    pub fn with_options(
        output_root: &Path,
        grace: Duration,
        apptainer: &str,
        wake: Arc<Notify>,
        options: LocalOptions,
    ) -> Self {
        let as_root = nix::unistd::geteuid().is_root();
        let layout = Layout::new(output_root);
        let backfill = super::backfill_local::LocalBackfill::new(layout.clone(), wake.clone());
        let unreachable = if as_root { closed_ancestor(layout.root()) } else { None };
        if let Some(dir) = &unreachable {
            tracing::warn!(dir = %dir.display(), "jobs run as their users but cannot pass through this directory: make it o+x or move executor.output_root");
        }
        let helper = if as_root { super::enter::helper() } else { None };
        if as_root && helper.is_none() {
            tracing::warn!("the jpu-share binary is not found: jobs get no namespaces of their own");
        }
        let containment = Containment::detect(as_root, helper.as_deref());
        let works = |env: &[(&str, &str)]| helper.as_deref().is_some_and(|h| super::enter::works(h, env));
        let net_namespace = works(&[("JPU_NETNS", "1")]);
        // the probe's tmpfs are one page each, in a mount namespace of its own
        let private_scratch = works(&[("JPU_PRIVATE", "4096")]);
        if as_root && options.gpu_devices.rule(&[]).is_empty() {
            tracing::warn!(pattern = %options.gpu_devices.pattern,
                "executor.gpu_devices names no device node here: jobs are not confined to their GPUs (none to confine?)");
        }
        let tag = fnv1a(layout.root().as_os_str().as_encoded_bytes());
        let inner = Mutex::new(Inner::default());
        Self {
            shared: Arc::new(Shared {
                layout,
                unreachable,
                backfill,
                grace,
                apptainer: apptainer.to_string(),
                wake,
                as_root,
                containment,
                helper,
                net_namespace,
                private_scratch,
                spawner: std::sync::OnceLock::new(),
                allow_user_namespaces: options.allow_user_namespaces,
                pids_per_gpu: options.pids_per_gpu.max(1),
                limits: options.limits,
                gpu_devices: options.gpu_devices,
                tag,
                inner,
            }),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.shared.layout
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.shared.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, job: JobId, attempt: u32) -> AttemptRecord {
        AttemptRecord::new(self.shared.layout.attempt_dir(job, attempt))
    }

    /// Writes the attempt's files and starts its wrapper.
    fn launch(&self, req: &StartRequest, record: &AttemptRecord) -> std::io::Result<Child> {
        let shared = &self.shared;
        let layout = &shared.layout;
        let uid = match (shared.as_root, req.unix_uid) {
            (false, _) => None,
            (true, Some(uid)) if uid != 0 => Some(uid),
            // never root, never a uid shared with someone else (nobody)
            (true, _) => {
                return Err(std::io::Error::other("the job's user has no unix uid of their own; an admin must set one"))
            }
        };
        // jobs pass through to their own directory; nobody lists the others
        private_dir(layout.root(), 0o711)?;
        private_dir(&layout.root().join(".attempts"), 0o700)?;
        private_dir(record.dir(), 0o700)?;
        if !req.owner.is_empty() {
            record.write("owner", &req.owner)?;
        }
        private_dir(&layout.root().join(".logs"), 0o700)?;
        // the primary group: the directory's, else the uid's own number
        let gid = uid.map(|uid| req.unix_gid.unwrap_or(uid));
        super::layout::create_output_dir(&req.output_dir, uid.zip(gid))?;
        if let Some(places) = &req.places {
            places.prepare(uid.zip(gid))?;
        }
        let datasets_dir = req.places.as_ref().map(|p| p.datasets.clone()).unwrap_or_default();
        let datasets_open =
            req.places.as_ref().map(|p| serde_json::to_string(&p.open).unwrap_or_default()).unwrap_or_default();
        let keep = req
            .places
            .as_ref()
            .and_then(|p| std::env::join_paths([&p.home, &p.lab_dir, &p.datasets]).ok())
            .unwrap_or_default();
        // the lab's gid too: its share is the lab's group's (policy §13)
        let lab_gid = req.places.as_ref().and_then(|p| p.lab_gid).filter(|g| *g != 0);
        let groups: Vec<String> = req.groups.iter().copied().chain(lab_gid).map(|g| g.to_string()).collect();
        write_private(&record.script(), req.command.as_bytes())?;
        if let Some(uid) = uid {
            // the job reads it through the descriptor the wrapper opened,
            // and /dev/fd/3 opens the file again as the job's user (the
            // directory around it stays closed)
            std::os::unix::fs::chown(record.script(), Some(uid), gid)?;
            fs::set_permissions(record.script(), fs::Permissions::from_mode(0o400))?;
        }
        record.write("limit_seconds", &req.time_limit.as_secs().max(1).to_string())?;
        let limits = contain::Limits {
            cpus: req.cpus,
            mem_bytes: u64::from(req.mem_gb.max(1)) << 30,
            pids: shared.pids_per_gpu.saturating_mul(req.gpus.len().max(1) as u32),
        };
        let private_scratch = shared.private_scratch && uid.is_some();
        if uid.is_some() {
            make_fifo(&record.dir().join("output"))?;
        }
        let gpus = shared.gpu_devices.rule(&req.gpus);
        let cgroup = shared.containment.create(&self.cgroup_name(req.job, req.attempt), limits, &gpus)?;
        let confined = match &cgroup.devices {
            Some(Ok(_)) => true,
            // cgroups are there and the program did not go on: a job would
            // reach every GPU of the node, so it does not start
            Some(Err(why)) if shared.containment.has_cgroups() => {
                cgroup.remove();
                return Err(std::io::Error::other(format!("cannot confine the job to its GPUs: {why}")));
            }
            Some(Err(why)) => {
                tracing::warn!(job = req.job, %why, "GPUs are not confined on this host");
                false
            }
            None => false,
        };
        // confined, CUDA numbers the GPUs it can open from 0 (as Slurm's
        // ConstrainDevices does); the host's indices stay in JPU_GPU_INDICES
        write_private(&record.dir().join("env"), &env_file(req, confined))?;

        let mut log = OpenOptions::new().create(true).append(true).mode(0o600).open(layout.log(req.job))?;
        let offset = log.seek(SeekFrom::End(0))?;
        record.write("log_offset", &offset.to_string())?;
        writeln!(log, "{}", header(req, uid))?;
        if uid.is_some() {
            writeln!(
                log,
                "[jpu-share] contained by {}; limits: {} CPUs, {} GiB RAM, {} processes",
                shared.containment.describe(),
                limits.cpus,
                req.mem_gb,
                limits.pids
            )?;
            match &cgroup.devices {
                Some(Ok(how)) => writeln!(log, "[jpu-share] GPUs: only this job's own may be opened ({how})")?,
                Some(Err(why)) => writeln!(
                    log,
                    "[jpu-share] warning: GPUs are NOT confined: every GPU of this node can be opened ({why})"
                )?,
                None => {}
            }
            if !shared.net_namespace {
                writeln!(log, "[jpu-share] no network namespace could be created here: this job HAS network access")?;
            }
            if !shared.private_scratch {
                writeln!(
                    log,
                    "[jpu-share] no IPC and mount namespaces here: /tmp, /var/tmp and /dev/shm are the host's"
                )?;
            }
            if let Some(Err(why)) = shared.spawner.get().map(|s| &s.denies_user_namespaces) {
                writeln!(log, "[jpu-share] this job may create user namespaces ({why})")?;
            }
        } else {
            writeln!(log, "[jpu-share] the server does not run as root: this job runs as the server's own user, NOT isolated, and HAS network access (executor.allow_unisolated)")?;
        }
        if let (Some(dir), Some(_)) = (&shared.unreachable, uid) {
            writeln!(
                log,
                "[jpu-share] warning: {} is closed to other users, so this job cannot reach JOB_OUTPUT_DIR by its path",
                dir.display()
            )?;
        }

        let join: Vec<String> = cgroup.join.iter().map(|p| p.display().to_string()).collect();
        let path_of = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let flag = |on: bool| if on && uid.is_some() { "1" } else { "" };
        let mut command = tokio::process::Command::new(super::bash());
        command
            .arg("-c")
            .arg(WRAPPER)
            .arg("jpu-attempt")
            .arg(record.dir())
            .arg(req.time_limit.as_secs().max(1).to_string())
            .arg(shared.grace.as_secs().max(1).to_string())
            .arg(uid.map(|u| u.to_string()).unwrap_or_default())
            // the wrapper's environment is ours alone: the job's is in its
            // env file, applied after the privilege drop
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()))
            .env("LANG", "C.UTF-8")
            .env("JPU_OUTPUT_DIR", &req.output_dir)
            .env("JPU_CG_JOIN", join.join(":"))
            .env("JPU_CG_OOM", path_of(&cgroup.oom_events))
            .env("JPU_CG_KILL", path_of(&cgroup.kill))
            .env("JPU_NETNS", flag(shared.net_namespace))
            .env("JPU_PIDNS", flag(shared.containment.pid_namespace()))
            .env("JPU_GID", gid.map(|g| g.to_string()).unwrap_or_default())
            .env("JPU_GROUPS", groups.join(","))
            .env("JPU_PRIVATE", if private_scratch { limits.mem_bytes.to_string() } else { String::new() })
            // its home and share, where they lie under a scratch folder
            // its private ones would cover (a test's temp dir)
            .env("JPU_KEEP", keep)
            // the datasets open to its lab, bound read-only over an empty
            // folder (the others are not there for it)
            .env("JPU_DATASETS_DIR", if private_scratch { datasets_dir.as_os_str() } else { std::ffi::OsStr::new("") })
            .env("JPU_DATASETS_OPEN", datasets_open)
            .env("JPU_ENTER", shared.helper.as_deref().unwrap_or(Path::new("")))
            // a write past it fails (SIGXFSZ); the end's own check then
            // finds the output over its limit
            .env("JPU_FSIZE", (shared.limits.max_output_bytes / 1024 + 1).to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // its own group: a Ctrl-C or SIGTERM to the server does not reach jobs
            .process_group(0);
        if let Some(image) = &req.image {
            command.arg(super::container::missing_message("this host")).args(super::container::exec_prefix(
                &shared.apptainer,
                image,
                &req.output_dir,
            ));
        }
        let child = command.spawn()?;
        if let Some(pid) = child.id() {
            record.write("wrapper_pid", &pid.to_string())?;
        }
        Ok(child)
    }

    /// Kills every attempt a local executor with this output root left
    /// running on this host, through their cgroups (for tests that end
    /// with jobs still running; a server never does this on its own).
    pub fn kill_every_attempt(output_root: &Path) {
        let tag = fnv1a(Layout::new(output_root).root().as_os_str().as_encoded_bytes());
        Containment::detect_quietly().kill_all_named(&format!("{tag:016x}-"));
    }

    /// The attempt's cgroup name: unique on this host (the output root
    /// tells servers apart) and the same after a restart.
    fn cgroup_name(&self, job: JobId, attempt: u32) -> String {
        format!("{:016x}-{job}-{attempt}", self.shared.tag)
    }

    /// Watches an attempt until it ends, then reports it. `child` is the
    /// wrapper when we started it; adopted attempts are polled.
    fn watch(&self, key: Key, record: AttemptRecord, child: Option<Child>) {
        if !self.lock().watching.insert(key) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            let mut pace = limits::Pace::default();
            if let Some(mut child) = child {
                loop {
                    tokio::select! {
                        _ = child.wait() => break,
                        _ = tokio::time::sleep(limits::CHECK_EVERY) => me.enforce_limits(key, &record, Some(&mut pace)).await,
                    }
                }
            }
            let mut polls = 0u32;
            let state = loop {
                match record.state() {
                    RecordState::Running { .. } => {
                        polls += 1;
                        if polls.is_multiple_of((limits::CHECK_EVERY.as_millis() / POLL.as_millis()) as u32) {
                            me.enforce_limits(key, &record, Some(&mut pace)).await;
                        }
                        tokio::time::sleep(POLL).await
                    }
                    other => break other,
                }
            };
            // a job its file-size limit stopped (SIGXFSZ) wrote to its
            // limit: measured once more, it ends OUTPUT_LIMIT, not FAILED
            let failed = matches!(state, RecordState::Ended { end: EndSignal::Exited(code), .. } if code != 0);
            let state = if failed
                && limits::check(&me.shared.layout, key.0, &record, me.shared.limits, None).await == Some(true)
            {
                record.state()
            } else {
                state
            };
            me.lock().watching.remove(&key);
            me.report(key, &record, state);
        });
    }

    /// Stops the attempt if its log or output passed its limit (again each
    /// time it is found over: no grace, every second it writes more).
    async fn enforce_limits(&self, key: Key, record: &AttemptRecord, pace: Option<&mut limits::Pace>) {
        if limits::check(&self.shared.layout, key.0, record, self.shared.limits, pace).await.is_none() {
            return;
        }
        if let Some(pgid) = record.pgid().filter(|p| *p > 0) {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        self.kill_cgroup(key);
    }

    /// Kills every process left in the attempt's cgroup, if it has one.
    fn kill_cgroup(&self, (job, attempt): Key) {
        self.shared.containment.existing(&self.cgroup_name(job, attempt)).kill();
    }

    fn report(&self, key: Key, record: &AttemptRecord, state: RecordState) {
        let (end, ended_ms) = match state {
            RecordState::Ended { end, ended_ms, .. } => (end, Some(ended_ms)),
            RecordState::Running { .. } => return,
            RecordState::Lost { .. } | RecordState::NotStarted => (EndSignal::Lost, None),
        };
        let log = self.shared.layout.log(key.0);
        let log_tail = super::record::read_log_tail(&log, record.log_offset());
        record.close_log(&log, key.1, end);
        // the relay's FIFO and the (emptied) env file served only the start
        for file in ["output", "env"] {
            let _ = fs::remove_file(record.dir().join(file));
        }
        let cgroup = self.shared.containment.existing(&self.cgroup_name(key.0, key.1));
        if !cgroup.dirs.is_empty() {
            // waits for dying processes: not on an async worker
            tokio::task::spawn_blocking(move || cgroup.remove());
        }
        let mut inner = self.lock();
        inner.cancels.remove(&key);
        inner.finished.push(Finished { job: key.0, attempt: key.1, end, log_tail, ended_ms });
        drop(inner);
        self.shared.wake.notify_one();
    }
}

#[async_trait::async_trait]
impl Executor for LocalExecutor {
    fn isolation(&self) -> app::model::policy::IsolationFacts {
        let s = &self.shared;
        app::model::policy::IsolationFacts {
            executor: "local".into(),
            own_uid: s.as_root,
            limits: if s.as_root { s.containment.describe() } else { String::new() },
            loopback_only: s.net_namespace,
            private_scratch: s.private_scratch,
            no_user_namespaces: s.as_root && !s.allow_user_namespaces,
            container: s.apptainer.clone(),
            max_log_bytes: s.limits.max_log_bytes,
            max_output_bytes: s.limits.max_output_bytes,
        }
    }

    async fn start(&self, req: StartRequest) -> Result<(), ExecutorError> {
        let key = (req.job, req.attempt);
        if self.lock().watching.contains(&key) {
            return Ok(());
        }
        let record = self.record(req.job, req.attempt);
        if record.foreign(&req.owner) {
            record
                .set_aside()
                .map_err(|e| ExecutorError::Unavailable(format!("cannot set a foreign record aside: {e}")))?;
        }
        // idempotent: an attempt that already ran is adopted, never rerun
        match record.state() {
            RecordState::NotStarted => {
                // files written and a process spawned: blocking work that
                // would otherwise stall the requests sharing this worker
                // (on the spawner thread, whose filter the job inherits)
                let (me, record_for_launch) = (self.clone(), record.clone());
                let spawner = self.shared.spawner.get_or_init(|| {
                    super::spawner::Spawner::new(
                        self.shared.as_root && !self.shared.allow_user_namespaces,
                        tokio::runtime::Handle::current(),
                    )
                });
                let child = spawner
                    .run(move || me.launch(&req, &record_for_launch))
                    .await
                    .ok_or_else(|| ExecutorError::Refused("starting the job's process failed on the spawner".into()))?
                    .map_err(|e| ExecutorError::Refused(format!("cannot start the job's process: {e}")))?;
                self.watch(key, record, Some(child));
            }
            RecordState::Running { .. } => self.watch(key, record, None),
            ended => self.report(key, &record, ended),
        }
        Ok(())
    }

    async fn take_finished(&self) -> Result<Vec<Finished>, ExecutorError> {
        Ok(std::mem::take(&mut self.lock().finished))
    }

    async fn cancel(&self, job: JobId, attempt: u32, grace: Duration) -> Result<(), ExecutorError> {
        let key = (job, attempt);
        let record = self.record(job, attempt);
        let state = record.state();
        let pgid = match state {
            RecordState::Running { pgid, .. } => pgid,
            RecordState::NotStarted if !self.lock().watching.contains(&key) => {
                // nothing of it exists here: it is over
                self.report(
                    key,
                    &record,
                    RecordState::Ended { started_ms: 0, ended_ms: crate::clock::now_ms(), end: EndSignal::Cancelled },
                );
                return Ok(());
            }
            _ => return Ok(()), // its end is being reported
        };
        if pgid <= 0 {
            return Ok(()); // its process group is not there yet: next cycle
        }
        // the mark comes first, so the end reads as a cancel even after a restart
        record.mark_cancelled().map_err(|e| ExecutorError::Unavailable(format!("cannot record the cancel: {e}")))?;
        let sent = self.lock().cancels.get(&key).copied();
        match sent {
            None => {
                // `timeout` passes SIGTERM to the whole group and sends
                // SIGKILL itself after the grace
                let _ = kill(Pid::from_raw(pgid), Signal::SIGTERM);
                self.lock().cancels.insert(key, Instant::now());
            }
            Some(at) if at.elapsed() > grace + Duration::from_secs(2) => {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                self.kill_cgroup(key);
            }
            Some(_) => {}
        }
        Ok(())
    }

    async fn deploy_backfill(&self, request: BackfillRequest) -> Result<BackfillStarted, ExecutorError> {
        self.shared.backfill.deploy(request)
    }

    async fn reclaim_backfill(&self, id: i64, executor_ref: &str, grace: Duration) -> Result<(), ExecutorError> {
        self.shared.backfill.reclaim(id, executor_ref, grace).await
    }

    async fn take_backfill_ended(&self) -> Result<Vec<i64>, ExecutorError> {
        Ok(self.shared.backfill.take_ended())
    }

    async fn adopt_backfill(&self, id: i64, executor_ref: &str) -> Result<bool, ExecutorError> {
        Ok(self.shared.backfill.adopt(id, executor_ref))
    }

    async fn recover(&self, attempts: Vec<StartRequest>) -> Result<Vec<(JobId, u32, Observed)>, ExecutorError> {
        let mut seen = Vec::with_capacity(attempts.len());
        for req in attempts {
            let key = (req.job, req.attempt);
            let record = self.record(req.job, req.attempt);
            if record.foreign(&req.owner) {
                record
                    .set_aside()
                    .map_err(|e| ExecutorError::Unavailable(format!("cannot set a foreign record aside: {e}")))?;
            }
            let observed = match record.state() {
                RecordState::NotStarted => Observed::NotStarted,
                RecordState::Running { started_ms, .. } => {
                    self.watch(key, record, None);
                    Observed::Running { started_ms }
                }
                state @ (RecordState::Ended { started_ms, .. } | RecordState::Lost { started_ms }) => {
                    self.report(key, &record, state);
                    Observed::Ended { started_ms }
                }
            };
            seen.push((req.job, req.attempt, observed));
        }
        Ok(seen)
    }
}
