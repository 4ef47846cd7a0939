//! The Slurm executor: each attempt is one `sbatch` job named
//! `jpu-<installation>-<job>-<attempt>` (the idempotency key: before
//! submitting, the name is looked up, so a restart never submits an
//! attempt twice; the installation id keeps two servers — or a reset
//! database — sharing one cluster from adopting each other's jobs),
//! pinned to the chosen node with `--nodelist` and `--gres=gpu:<tier>:<n>`
//! in the tier's partition, with CPUs, memory and time limit per policy.
//! Ends are read from `scontrol show job -o` (no slurmdbd needed); cancel
//! is `scancel` (Slurm's `KillWait` is the grace). Nodes and GPUs come
//! from `scontrol -d show node -o`, so nodes added in Slurm appear as
//! placements. The job's files use the same [`Layout`] as the local
//! executor, so logs and outputs are served the same way.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use super::layout::{private_dir, Layout};
use super::limits;
use super::record::AttemptRecord;
use super::slurm_cli::{parse_jobs, parse_nodes, shell_quote, SlurmCli, SlurmJob};
use super::{
    BackfillRequest, BackfillStarted, Executor, ExecutorError, Finished, NodeInventory, Observed, StartRequest,
};
use crate::clock::now_ms;
use crate::policy::oom::EndSignal;
use crate::policy::JobId;

/// How often running attempts are checked for their end.
const POLL: Duration = Duration::from_secs(1);

type Key = (JobId, u32);

#[derive(Default)]
struct Inner {
    /// Attempts submitted to Slurm and not yet reported ended.
    watching: HashMap<Key, u64>,
    finished: Vec<Finished>,
    /// Backfill instance id → Slurm job id.
    backfill: HashMap<i64, u64>,
    backfill_ended: Vec<i64>,
}

struct Shared {
    /// Prefix of our Slurm job names.
    installation: String,
    backfill_partition: String,
    layout: Layout,
    cli: SlurmCli,
    apptainer: String,
    wake: Arc<Notify>,
    as_root: bool,
    limits: super::limits::WriteLimits,
    /// When each running attempt's output is walked next.
    paces: Mutex<HashMap<Key, super::limits::Pace>>,
    inner: Mutex<Inner>,
}

#[derive(Clone)]
pub struct SlurmExecutor {
    shared: Arc<Shared>,
}

impl SlurmExecutor {
    /// Starts a background poller that reports ends and wakes `wake`.
    /// `installation` is a short id unique to this database.
    pub fn new(
        installation: &str,
        backfill_partition: &str,
        output_root: &Path,
        command_timeout: Duration,
        apptainer: &str,
        wake: Arc<Notify>,
        limits: super::limits::WriteLimits,
    ) -> Self {
        let shared = Arc::new(Shared {
            installation: installation.to_string(),
            backfill_partition: backfill_partition.to_string(),
            layout: Layout::new(output_root),
            cli: SlurmCli { timeout: command_timeout },
            apptainer: apptainer.to_string(),
            wake,
            as_root: nix::unistd::geteuid().is_root(),
            limits,
            paces: Default::default(),
            inner: Mutex::new(Inner::default()),
        });
        let me = Self { shared };
        let poller = me.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(POLL).await;
                let idle = {
                    let inner = poller.lock();
                    inner.watching.is_empty() && inner.backfill.is_empty()
                };
                if idle {
                    continue;
                }
                if let Err(e) = poller.poll().await {
                    tracing::warn!(error = %e, "cannot read job states from Slurm");
                }
            }
        });
        me
    }

    fn job_name(&self, job: JobId, attempt: u32) -> String {
        format!("jpu-{}-{job}-{attempt}", self.shared.installation)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.shared.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, job: JobId, attempt: u32) -> AttemptRecord {
        AttemptRecord::new(self.shared.layout.attempt_dir(job, attempt))
    }

    async fn jobs(&self) -> Result<Vec<SlurmJob>, ExecutorError> {
        let text = self.shared.cli.run("scontrol", &["show".into(), "job".into(), "-o".into()]).await?;
        // "No jobs in the system" is not a job line and parses to nothing
        Ok(parse_jobs(&text))
    }

    /// Moves attempts that ended in Slurm (or vanished from it) to
    /// `finished` and wakes the loop.
    async fn poll(&self) -> Result<(), ExecutorError> {
        let jobs: HashMap<u64, SlurmJob> = self.jobs().await?.into_iter().map(|j| (j.id, j)).collect();
        let watching: Vec<(Key, u64)> = self.lock().watching.iter().map(|(k, v)| (*k, *v)).collect();
        self.enforce_limits(&watching, &jobs).await;
        let mut any = false;
        for (key, slurm_id) in watching {
            let end = match jobs.get(&slurm_id) {
                Some(job) => match job.end() {
                    Some(end) => end,
                    None => continue,
                },
                None => EndSignal::Lost, // purged before we saw its end
            };
            let record = self.record(key.0, key.1);
            let end = if end == EndSignal::Lost { end } else { record.decided_end(end) };
            let log = self.shared.layout.log(key.0);
            let log_tail = super::record::read_log_tail(&log, record.log_offset());
            record.close_log(&log, key.1, end);
            let mut inner = self.lock();
            if inner.watching.remove(&key).is_some() {
                inner.finished.push(Finished { job: key.0, attempt: key.1, end, log_tail, ended_ms: None });
                any = true;
            }
        }
        let instances: Vec<(i64, u64)> = self.lock().backfill.iter().map(|(k, v)| (*k, *v)).collect();
        for (id, slurm_id) in instances {
            if jobs.get(&slurm_id).is_none_or(|j| j.end().is_some()) {
                let mut inner = self.lock();
                if inner.backfill.remove(&id).is_some() {
                    inner.backfill_ended.push(id);
                    any = true;
                }
            }
        }
        if any {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Cancels running attempts whose log or output passed its limit
    /// (every poll for logs, every few for output directories).
    async fn enforce_limits(&self, watching: &[(Key, u64)], jobs: &HashMap<u64, SlurmJob>) {
        let mut paces = std::mem::take(&mut *self.shared.paces.lock().unwrap_or_else(|p| p.into_inner()));
        paces.retain(|key, _| watching.iter().any(|(k, _)| k == key));
        for &(key, slurm_id) in watching {
            if jobs.get(&slurm_id).is_none_or(|j| j.end().is_some()) {
                continue;
            }
            let record = self.record(key.0, key.1);
            let pace = paces.entry(key).or_default();
            // a stop already recorded: Slurm reports its end
            let max = self.shared.limits;
            if limits::check(&self.shared.layout, key.0, &record, max, Some(pace)).await != Some(true) {
                continue;
            }
            if let Err(e) =
                self.shared.cli.run("scancel", &["--signal=KILL".into(), "--full".into(), slurm_id.to_string()]).await
            {
                tracing::warn!(job = key.0, error = %e, "cannot stop an attempt over its limit");
            }
        }
        *self.shared.paces.lock().unwrap_or_else(|p| p.into_inner()) = paces;
    }

    /// Whether Slurm still runs (or is cleaning up) this job.
    async fn still_there(&self, slurm_id: u64) -> Result<bool, ExecutorError> {
        Ok(self.jobs().await?.iter().any(|j| j.id == slurm_id && j.end().is_none()))
    }

    /// The Slurm job of this attempt, by the id we wrote down or by name.
    fn known_id(&self, record: &AttemptRecord, jobs: &[SlurmJob], key: Key) -> Option<u64> {
        let written = super::record::read_small(&record.dir().join("slurm_id")).and_then(|s| s.trim().parse().ok());
        written.or_else(|| jobs.iter().find(|j| j.name == self.job_name(key.0, key.1)).map(|j| j.id))
    }

    /// Writes the batch script and submits it; returns Slurm's job id.
    async fn submit(&self, req: &StartRequest, record: &AttemptRecord) -> Result<u64, ExecutorError> {
        let files = |e: std::io::Error| ExecutorError::Refused(format!("cannot prepare the job's files: {e}"));
        let layout = &self.shared.layout;
        // policy §8: never as root, never as a uid the site's directory
        // does not know (an allocated one exists on the server alone)
        let uid = match req.unix_uid {
            Some(uid) if req.uid_configured && uid != 0 => uid,
            _ => {
                return Err(ExecutorError::Refused(
                    "the job's user has no configured unix uid, and Slurm runs jobs only as their user's own uid"
                        .into(),
                ))
            }
        };
        let gid = req.unix_gid.unwrap_or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)).ok().flatten().map_or(uid, |u| u.gid.as_raw())
        });
        private_dir(layout.root(), 0o711).map_err(files)?;
        private_dir(&layout.root().join(".attempts"), 0o700).map_err(files)?;
        private_dir(record.dir(), 0o700).map_err(files)?;
        // slurmstepd opens the log as the job's user: the directory is
        // passable, each log is its user's alone
        private_dir(&layout.root().join(".logs"), 0o711).map_err(files)?;
        super::layout::create_output_dir(&req.output_dir, self.shared.as_root.then_some((uid, gid))).map_err(files)?;
        // the nodes see the same storage: home and lab share made here
        if let Some(places) = &req.places {
            places.prepare(self.shared.as_root.then_some((uid, gid))).map_err(files)?;
            if self.shared.as_root {
                // never a reason to refuse the job: without its lab's
                // datasets it can still run (the next recompute retries)
                if let Err(e) = lab_datasets(places, uid) {
                    tracing::warn!(error = %e, job = req.job, "the lab's datasets are not all open to this job");
                }
            }
        }
        let mut batch = String::from("#!/bin/bash\n# generated by jpu-share for one attempt\n");
        batch.push_str(&format!("export PATH={}\n", shell_quote("/usr/local/bin:/usr/bin:/bin")));
        batch.push_str(&format!("export HOME={}\n", shell_quote(&req.output_dir.display().to_string())));
        for (key, value) in req.env.iter().filter(|(k, _)| k != "CUDA_VISIBLE_DEVICES") {
            // Slurm sets CUDA_VISIBLE_DEVICES for the GPUs it bound; the
            // datasets are the lab's view (no mount namespace of ours here)
            let value = match (key.as_str(), &req.places) {
                ("JPU_DATASETS", Some(places)) => places.lab_view.display().to_string(),
                _ => value.clone(),
            };
            batch.push_str(&format!("export {key}={}\n", shell_quote(&value)));
        }
        batch.push_str(&super::container::batch_run_lines(req, &self.shared.apptainer));
        // the job's env (often API keys) and script: root's alone; sbatch
        // reads the file here and Slurm keeps its own copy
        let batch_path = record.dir().join("batch.sh");
        record.write("batch.sh", batch.trim_end_matches('\n')).map_err(files)?;
        record.write("limit_seconds", &req.time_limit.as_secs().to_string()).map_err(files)?;

        let mut log =
            OpenOptions::new().create(true).append(true).mode(0o600).open(layout.log(req.job)).map_err(files)?;
        if self.shared.as_root {
            std::os::unix::fs::fchown(&log, Some(uid), Some(gid)).map_err(files)?;
        }
        let offset = log.seek(SeekFrom::End(0)).map_err(files)?;
        record.write("log_offset", &offset.to_string()).map_err(files)?;
        let gpus: Vec<String> = req.gpus.iter().map(u32::to_string).collect();
        writeln!(
            log,
            "[jpu-share] attempt {} of job {} on {} ({}), {} GPU(s) (scheduler's indices {}), Slurm partition {}, time limit {} min",
            req.attempt,
            req.job,
            req.node,
            req.tier,
            req.gpus.len(),
            gpus.join(","),
            req.partition,
            req.time_limit.as_secs() / 60
        )
        .map_err(files)?;

        let minutes = req.time_limit.as_secs().div_ceil(60).max(1);
        let mut args = vec![
            "--parsable".to_string(),
            format!("--job-name={}", self.job_name(req.job, req.attempt)),
            format!("--partition={}", req.partition),
            format!("--nodelist={}", req.node),
            format!("--gres=gpu:{}:{}", req.tier, req.gpus.len()),
            format!("--cpus-per-task={}", req.cpus.max(1)),
            format!("--mem={}G", req.mem_gb.max(1)),
            format!("--time={minutes}"),
            format!("--output={}", layout.log(req.job).display()),
            format!("--error={}", layout.log(req.job).display()),
            "--open-mode=append".to_string(),
            format!("--chdir={}", req.output_dir.display()),
            "--export=NONE".to_string(),
            format!("--uid={uid}"),
            format!("--gid={gid}"),
        ];
        args.push(batch_path.display().to_string());
        let id = self.shared.cli.sbatch(&args).await?;
        record.write("slurm_id", &id.to_string()).map_err(files)?;
        record.write("started", &now_ms().to_string()).map_err(files)?;
        Ok(id)
    }
}

#[async_trait::async_trait]
impl Executor for SlurmExecutor {
    /// `scontrol` for the node's address, then `sbatch`: each may take
    /// the command timeout.
    fn longest_start(&self) -> Duration {
        self.shared.cli.timeout * 2 + Duration::from_secs(1)
    }

    /// What Slurm holds (`--uid`, `task/cgroup`); the nodes' own network
    /// and scratch are the cluster's to configure.
    fn isolation(&self) -> app::model::policy::IsolationFacts {
        let s = &self.shared;
        app::model::policy::IsolationFacts {
            executor: "slurm".into(),
            own_uid: true,
            limits: "Slurm's cgroups (--cpus-per-task, --mem)".into(),
            loopback_only: false,
            private_scratch: false,
            no_user_namespaces: false,
            container: s.apptainer.clone(),
            max_log_bytes: s.limits.max_log_bytes,
            max_output_bytes: s.limits.max_output_bytes,
        }
    }

    async fn start(&self, req: StartRequest) -> Result<(), ExecutorError> {
        let key = (req.job, req.attempt);
        if self.lock().watching.contains_key(&key) {
            return Ok(());
        }
        let record = self.record(req.job, req.attempt);
        let jobs = self.jobs().await?;
        let id = match self.known_id(&record, &jobs, key) {
            Some(id) => id, // submitted before (e.g. just before a crash): adopt it
            None => self.submit(&req, &record).await?,
        };
        self.lock().watching.insert(key, id);
        Ok(())
    }

    async fn take_finished(&self) -> Result<Vec<Finished>, ExecutorError> {
        Ok(std::mem::take(&mut self.lock().finished))
    }

    async fn cancel(&self, job: JobId, attempt: u32, _grace: Duration) -> Result<(), ExecutorError> {
        let Some(id) = self.lock().watching.get(&(job, attempt)).copied() else {
            return Ok(()); // not running here (its end is being reported)
        };
        let record = self.record(job, attempt);
        if record.cancelled() {
            return Ok(()); // asked already; Slurm's KillWait does the rest
        }
        record.mark_cancelled().map_err(|e| ExecutorError::Unavailable(format!("cannot record the cancel: {e}")))?;
        self.shared.cli.run("scancel", &[id.to_string()]).await?;
        Ok(())
    }

    async fn recover(&self, attempts: Vec<StartRequest>) -> Result<Vec<(JobId, u32, Observed)>, ExecutorError> {
        let jobs = self.jobs().await?;
        let mut seen = Vec::with_capacity(attempts.len());
        for req in attempts {
            let key = (req.job, req.attempt);
            let record = self.record(req.job, req.attempt);
            let started_ms = record.started_ms().unwrap_or_else(now_ms);
            let observed = match self.known_id(&record, &jobs, key) {
                None => Observed::NotStarted,
                Some(id) => {
                    self.lock().watching.insert(key, id);
                    // the poller reports it if it has ended
                    Observed::Running { started_ms }
                }
            };
            seen.push((req.job, req.attempt, observed));
        }
        if !self.lock().watching.is_empty() {
            self.poll().await?;
        }
        Ok(seen)
    }

    async fn deploy_backfill(&self, req: BackfillRequest) -> Result<BackfillStarted, ExecutorError> {
        let dir = self.shared.layout.root().join(".backfill");
        fs::create_dir_all(&dir).map_err(|e| ExecutorError::Refused(format!("cannot prepare backfill files: {e}")))?;
        // the port is the node's; any high port will do for a demo model server
        let port = 20_000 + (req.id.rem_euclid(20_000)) as u16;
        let script = format!(
            "#!/bin/bash\nexport JPU_BACKFILL_PORT={port} JPU_NODE={} JPU_TIER={}\nexport PATH=/usr/local/bin:/usr/bin:/bin\n{}\n",
            shell_quote(&req.node),
            shell_quote(&req.tier),
            req.command
        );
        let path = dir.join(format!("{}.sh", req.id));
        fs::write(&path, script)
            .map_err(|e| ExecutorError::Refused(format!("cannot write the backfill script: {e}")))?;
        let log = dir.join(format!("{}.log", req.id));
        let args = vec![
            "--parsable".to_string(),
            format!("--job-name=jpu-{}-backfill-{}", self.shared.installation, req.id),
            format!("--partition={}", self.shared.backfill_partition),
            format!("--nodelist={}", req.node),
            format!("--gres=gpu:{}:{}", req.tier, req.gpus.len()),
            "--no-requeue".to_string(),
            "--export=NONE".to_string(),
            format!("--output={}", log.display()),
            format!("--chdir={}", dir.display()),
            path.display().to_string(),
        ];
        let slurm_id = self.shared.cli.sbatch(&args).await?;
        self.lock().backfill.insert(req.id, slurm_id);
        Ok(BackfillStarted {
            executor_ref: slurm_id.to_string(),
            endpoint: Some(format!("http://{}:{port}", req.node)),
        })
    }

    async fn reclaim_backfill(&self, id: i64, executor_ref: &str, grace: Duration) -> Result<(), ExecutorError> {
        let Ok(slurm_id) = executor_ref.parse::<u64>() else {
            return Ok(());
        };
        self.lock().backfill.remove(&id);
        self.shared.cli.run("scancel", &[slurm_id.to_string()]).await?;
        // Slurm's KillWait is the grace; wait for the GPUs to be free
        let asked = std::time::Instant::now();
        while self.still_there(slurm_id).await? {
            if asked.elapsed() > grace + Duration::from_secs(10) {
                return Err(ExecutorError::Unavailable(format!(
                    "Slurm job {slurm_id} (backfill) is still there after the grace"
                )));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Ok(())
    }

    async fn take_backfill_ended(&self) -> Result<Vec<i64>, ExecutorError> {
        Ok(std::mem::take(&mut self.lock().backfill_ended))
    }

    async fn adopt_backfill(&self, id: i64, executor_ref: &str) -> Result<bool, ExecutorError> {
        let Ok(slurm_id) = executor_ref.parse::<u64>() else { return Ok(false) };
        let alive = self.still_there(slurm_id).await?;
        if alive {
            self.lock().backfill.insert(id, slurm_id);
        }
        Ok(alive)
    }

    async fn inventory(&self) -> Result<Option<Vec<NodeInventory>>, ExecutorError> {
        let text = self.shared.cli.run("scontrol", &["-d".into(), "show".into(), "node".into(), "-o".into()]).await?;
        Ok(Some(
            parse_nodes(&text)
                .into_iter()
                .map(|n| NodeInventory { name: n.name, gpus: n.gpus, up: n.up, addr: n.addr })
                .collect(),
        ))
    }
}

/// The lab's view of its datasets, with this person among its readers and
/// those of the fetched datasets open to the lab (the next full recompute,
/// `services::datasets::sync_access`, keeps it exact).
fn lab_datasets(places: &super::places::JobPlaces, uid: u32) -> std::io::Result<()> {
    use super::dataset_access::{admit, sync_view};
    sync_view(&places.lab_view, &places.open, None)?;
    admit(&places.lab_view, uid)?;
    let store = places.dataset_store();
    for (_, folder) in places.open.iter().filter(|(_, f)| f.starts_with(&store)) {
        admit(folder, uid)?;
    }
    Ok(())
}
