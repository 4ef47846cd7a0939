//! Containment of local attempts (policy §8): what a job may use and what
//! it may see. Each attempt gets its own cgroup, limited in CPU, memory and
//! process count in proportion to its GPUs; the attempt wrapper moves the
//! job into it, reads its OOM-kill count when the job ends (a RAM overrun
//! is `HOST_OOM`) and kills whatever is left in it. Each attempt also runs
//! in its own PID namespace: it sees no other processes, and when its first
//! process ends the kernel ends every other one, so a `setsid` or
//! double-forked child cannot outlive its job.
//!
//! Both cgroup layouts are handled: the unified v2 hierarchy, and the
//! older v1 controllers (memory, pids, cpu), where a v2 hierarchy mounted
//! beside them still gives `cgroup.kill` (seen on our CI machines, kernel
//! 6.x with v1 controllers). Where neither can be written (a container
//! without cgroup access), jobs still run, in their PID namespace, and the
//! job's log says that no limits apply.

use std::fs;
use std::path::{Path, PathBuf};

use super::devices::DeviceRule;

const ROOT: &str = "/sys/fs/cgroup";
/// Our parent cgroup in each hierarchy.
const PARENT: &str = "jpu-share";
/// Processes the wrapper itself keeps in the job's cgroup (timeout,
/// unshare, the namespace's init).
const WRAPPER_PIDS: u32 = 8;

/// What an attempt may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub cpus: u32,
    pub mem_bytes: u64,
    pub pids: u32,
}

#[derive(Debug, Clone, PartialEq)]
enum Layout {
    /// cgroup v2 with the memory, pids and cpu controllers.
    Unified(PathBuf),
    /// v1 controllers; `kill` is a v2 hierarchy beside them, if mounted.
    Split {
        memory: PathBuf,
        pids: PathBuf,
        cpu: Option<PathBuf>,
        kill: Option<PathBuf>,
        /// The v1 devices controller, used where no v2 hierarchy is.
        devices: Option<PathBuf>,
    },
    None(String),
}

/// How this host contains attempts; probed once when the executor starts.
#[derive(Debug, Clone)]
pub struct Containment {
    layout: Layout,
    /// `unshare --pid` works here (root, and allowed by the host).
    pid_namespace: bool,
}

/// One attempt's cgroups, as the wrapper and the clean-up need them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttemptCgroup {
    /// `cgroup.procs` files the job's first process writes itself into.
    pub join: Vec<PathBuf>,
    /// The file with the `oom_kill N` line.
    pub oom_events: Option<PathBuf>,
    /// `cgroup.kill`, where there is one.
    pub kill: Option<PathBuf>,
    /// Every directory made for it (removed once the attempt is over).
    pub dirs: Vec<PathBuf>,
    /// How its GPU device nodes are confined (None: there was nothing to
    /// confine), or why they are not.
    pub devices: Option<Result<&'static str, String>>,
}

impl Containment {
    /// Probes the host. Without root nothing can be contained; a PID
    /// namespace needs `helper` (the binary that makes the job's
    /// namespaces, `enter`).
    pub fn detect(as_root: bool, helper: Option<&Path>) -> Self {
        if !as_root {
            return Self { layout: Layout::None("the server is not root".into()), pid_namespace: false };
        }
        let layout = probe_layout(Path::new(ROOT));
        let pid_namespace = helper.is_some_and(|h| super::enter::works(h, &[("JPU_PIDNS", "1")]));
        let me = Self { layout, pid_namespace };
        tracing::info!(containment = %me.describe(), "local executor");
        me
    }

    /// The host's cgroup layout without the namespace probe or the log
    /// line (for clean-up outside an executor).
    pub fn detect_quietly() -> Self {
        let layout = if nix::unistd::geteuid().is_root() {
            probe_layout(Path::new(ROOT))
        } else {
            Layout::None("the server is not root".into())
        };
        Self { layout, pid_namespace: false }
    }

    /// Kills what runs in every attempt cgroup whose name starts with
    /// `prefix`, and removes those cgroups.
    pub fn kill_all_named(&self, prefix: &str) {
        let names: std::collections::BTreeSet<String> = self
            .roots()
            .iter()
            .filter_map(|root| fs::read_dir(root.join(PARENT)).ok())
            .flatten()
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.starts_with(prefix))
            .collect();
        for name in names {
            self.existing(&name).remove();
        }
    }

    fn roots(&self) -> Vec<&PathBuf> {
        match &self.layout {
            Layout::None(_) => Vec::new(),
            Layout::Unified(root) => vec![root],
            Layout::Split { memory, pids, cpu, kill, devices } => {
                [Some(memory), Some(pids), cpu.as_ref(), kill.as_ref(), devices.as_ref()]
                    .into_iter()
                    .flatten()
                    .collect()
            }
        }
    }

    /// Attempts get cgroups of their own here.
    pub fn has_cgroups(&self) -> bool {
        !matches!(self.layout, Layout::None(_))
    }

    pub fn pid_namespace(&self) -> bool {
        self.pid_namespace
    }

    /// One line for the job's log and the server's: what holds the job.
    pub fn describe(&self) -> String {
        let pids = if self.pid_namespace {
            "its own PID namespace (every process ends with it)"
        } else {
            "NO PID namespace (other processes are visible)"
        };
        format!("{}, {pids}", self.describe_cgroups())
    }

    /// What the cgroups hold (for a build, whose PID namespace is its own).
    pub fn describe_cgroups(&self) -> String {
        match &self.layout {
            Layout::Unified(_) => "a cgroup v2 of its own (CPU, memory and process limits, cgroup.kill)".to_string(),
            Layout::Split { kill: Some(_), .. } => {
                "cgroups of its own (v1 CPU, memory and process limits; v2 cgroup.kill)".into()
            }
            Layout::Split { kill: None, .. } => "cgroups of its own (v1 CPU, memory and process limits)".into(),
            Layout::None(why) => format!("NO cgroup limits ({why})"),
        }
    }

    /// Makes the attempt's cgroups with their limits, and the device rule
    /// that confines it to its own GPUs. `name` must be unique on this
    /// host and the same after a restart.
    pub fn create(&self, name: &str, limits: Limits, gpus: &DeviceRule) -> std::io::Result<AttemptCgroup> {
        let quota = u64::from(limits.cpus.max(1)) * 100_000;
        let pids = (limits.pids + WRAPPER_PIDS).to_string();
        let mut cg = AttemptCgroup::default();
        match &self.layout {
            Layout::None(_) => {}
            Layout::Unified(root) => {
                let dir = make(root, name, &mut cg)?;
                write(&dir, "memory.max", &limits.mem_bytes.to_string())?;
                let _ = write(&dir, "memory.swap.max", "0");
                write(&dir, "pids.max", &pids)?;
                write(&dir, "cpu.max", &format!("{quota} 100000"))?;
                cg.devices = confine_v2(&dir, gpus);
                cg.join.push(dir.join("cgroup.procs"));
                cg.oom_events = Some(dir.join("memory.events"));
                cg.kill = Some(dir.join("cgroup.kill"));
            }
            Layout::Split { memory, pids: pids_root, cpu, kill, devices } => {
                let dir = make(memory, name, &mut cg)?;
                write(&dir, "memory.limit_in_bytes", &limits.mem_bytes.to_string())?;
                // swap counts too where the kernel accounts it
                let _ = write(&dir, "memory.memsw.limit_in_bytes", &limits.mem_bytes.to_string());
                cg.join.push(dir.join("cgroup.procs"));
                cg.oom_events = Some(dir.join("memory.oom_control"));
                let dir = make(pids_root, name, &mut cg)?;
                write(&dir, "pids.max", &pids)?;
                cg.join.push(dir.join("cgroup.procs"));
                if let Some(cpu) = cpu {
                    let dir = make(cpu, name, &mut cg)?;
                    write(&dir, "cpu.cfs_period_us", "100000")?;
                    write(&dir, "cpu.cfs_quota_us", &quota.to_string())?;
                    cg.join.push(dir.join("cgroup.procs"));
                }
                if let Some(kill) = kill {
                    let dir = make(kill, name, &mut cg)?;
                    // the v2 program applies beside the v1 controllers
                    cg.devices = confine_v2(&dir, gpus);
                    cg.join.push(dir.join("cgroup.procs"));
                    cg.kill = Some(dir.join("cgroup.kill"));
                } else if let (Some(root), false) = (devices, gpus.is_empty()) {
                    let dir = make(root, name, &mut cg)?;
                    cg.devices = Some(
                        gpus.v1_denies()
                            .iter()
                            .try_for_each(|line| write(&dir, "devices.deny", line))
                            .map(|()| "the v1 devices controller")
                            .map_err(|e| e.to_string()),
                    );
                    cg.join.push(dir.join("cgroup.procs"));
                }
            }
        }
        if cg.devices.is_none() && !gpus.is_empty() {
            cg.devices = Some(Err(match &self.layout {
                Layout::None(why) => why.clone(),
                _ => "no cgroup v2 hierarchy nor v1 devices controller to write".into(),
            }));
        }
        Ok(cg)
    }

    /// The attempt's cgroups as [`create`](Self::create) made them, found
    /// again by name (after a restart, or to clean up).
    pub fn existing(&self, name: &str) -> AttemptCgroup {
        let roots = self.roots();
        let dirs: Vec<PathBuf> = roots.iter().map(|r| r.join(PARENT).join(name)).filter(|d| d.is_dir()).collect();
        AttemptCgroup {
            join: dirs.iter().map(|d| d.join("cgroup.procs")).collect(),
            kill: dirs.iter().map(|d| d.join("cgroup.kill")).find(|k| k.exists()),
            oom_events: None,
            dirs,
            devices: None,
        }
    }
}

impl AttemptCgroup {
    /// Kills every process in it at once, where `cgroup.kill` exists.
    pub fn kill(&self) {
        if let Some(kill) = &self.kill {
            let _ = fs::write(kill, "1");
        }
    }

    /// Kills every process left in it and removes its directories (a
    /// directory still holding dying processes is retried a few times).
    pub fn remove(&self) {
        self.kill();
        for _ in 0..50 {
            for procs in &self.join {
                for pid in
                    fs::read_to_string(procs).unwrap_or_default().split_whitespace().filter_map(|p| p.parse().ok())
                {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
                }
            }
            if self.dirs.iter().all(|d| fs::remove_dir(d).is_ok() || !d.exists()) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        tracing::warn!(dirs = ?self.dirs, "cannot remove an attempt's cgroups");
    }
}

/// The hierarchies under `root` we can make cgroups in, or why none.
fn probe_layout(root: &Path) -> Layout {
    // a hierarchy is there when its root has cgroup.procs
    let writable_parent = |dir: PathBuf| -> Option<PathBuf> {
        (dir.join("cgroup.procs").exists() && fs::create_dir_all(dir.join(PARENT)).is_ok()).then_some(dir)
    };
    let controllers = fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    if ["memory", "pids", "cpu"].iter().all(|c| controllers.split_whitespace().any(|x| x == *c)) {
        // controllers must be handed down to our parent and from it
        let _ = fs::write(root.join("cgroup.subtree_control"), "+memory +pids +cpu");
        let Some(root) = writable_parent(root.to_path_buf()) else {
            return Layout::None(format!("{} is not writable", root.display()));
        };
        return match fs::write(root.join(PARENT).join("cgroup.subtree_control"), "+memory +pids +cpu") {
            Ok(()) => Layout::Unified(root),
            Err(e) => Layout::None(format!("cannot enable the memory, pids and cpu controllers: {e}")),
        };
    }
    let (Some(memory), Some(pids)) = (writable_parent(root.join("memory")), writable_parent(root.join("pids"))) else {
        return Layout::None(format!("no writable memory and pids controllers under {}", root.display()));
    };
    let cpu = writable_parent(root.join("cpu"));
    let kill = writable_parent(root.join("unified")).filter(|u| u.join(PARENT).join("cgroup.procs").exists());
    let devices = writable_parent(root.join("devices"));
    Layout::Split { memory, pids, cpu, kill, devices }
}

/// Attaches the device program to an attempt's v2 cgroup.
fn confine_v2(dir: &Path, gpus: &DeviceRule) -> Option<Result<&'static str, String>> {
    (!gpus.is_empty()).then(|| gpus.attach(dir).map(|()| "a BPF device program").map_err(|e| e.to_string()))
}

fn make(root: &Path, name: &str, cg: &mut AttemptCgroup) -> std::io::Result<PathBuf> {
    let dir = root.join(PARENT).join(name);
    fs::create_dir_all(&dir)?;
    cg.dirs.push(dir.clone());
    Ok(dir)
}

fn write(dir: &Path, file: &str, value: &str) -> std::io::Result<()> {
    fs::write(dir.join(file), value)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.join(file).display())))
}

/// Reads `oom_kill N` from a memory.events / memory.oom_control file.
pub fn oom_kills(text: &str) -> u64 {
    text.lines().find_map(|l| l.strip_prefix("oom_kill ")).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oom_kill_counts_are_read_from_both_layouts() {
        assert_eq!(oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 2, "v1 memory.oom_control");
        assert_eq!(oom_kills("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n"), 1, "v2 memory.events");
        assert_eq!(oom_kills(""), 0);
    }

    #[test]
    fn a_host_without_cgroups_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let c = Containment { layout: probe_layout(&dir.path().join("absent")), pid_namespace: false };
        assert!(c.describe().contains("NO cgroup limits"), "{}", c.describe());
        let limits = Limits { cpus: 1, mem_bytes: 1 << 30, pids: 10 };
        assert_eq!(c.create("x", limits, &DeviceRule::default()).unwrap(), AttemptCgroup::default());
    }
}
