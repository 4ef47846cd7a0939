//! The thread that starts local attempts, and what it forbids them.
//!
//! A job must not create user namespaces (`unshare -Ur`, `clone` with
//! `CLONE_NEWUSER`): inside one it is "root" over fresh mount and network
//! namespaces, the kernel's largest attack surface for an unprivileged
//! user. Nothing in `setpriv` or `unshare` (util-linux 2.38) can forbid it,
//! so a seccomp filter does, installed on this one thread of the server and
//! inherited by every process it starts: the attempt wrapper, and so the
//! job. The rest of the server is not filtered. `clone3` answers `ENOSYS`
//! (its flags sit in memory a filter cannot read), which makes the C
//! library fall back to `clone`, where the flag is checked — the same rule
//! container runtimes apply. `executor.allow_user_namespaces` lifts it
//! (e.g. for an Apptainer installed without its setuid starter).
//!
//! Spawning stays `posix_spawn` (no `pre_exec`): forking the whole server
//! per job cost ~30 ms with a large heap and stalled every other thread.

use std::sync::mpsc;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

type Work = Box<dyn FnOnce() + Send>;

/// A thread that runs launch work, filtered or not.
pub struct Spawner {
    work: mpsc::Sender<Work>,
    /// Whether user namespaces are denied to what it starts, or why not.
    pub denies_user_namespaces: Result<(), String>,
}

impl Spawner {
    /// Starts the thread; it enters `runtime` so child processes are
    /// reaped by it. Ends when the spawner is dropped.
    pub fn new(deny_user_namespaces: bool, runtime: tokio::runtime::Handle) -> Self {
        let (work, queue) = mpsc::channel::<Work>();
        let (ready, installed) = mpsc::channel();
        let started = std::thread::Builder::new().name("jpu-spawner".into()).spawn(move || {
            let _runtime = runtime.enter();
            let filtered = if deny_user_namespaces { install() } else { Err("allowed by the settings".into()) };
            let _ = ready.send(filtered);
            while let Ok(job) = queue.recv() {
                job();
            }
        });
        let denies_user_namespaces = match started {
            Ok(_) => installed.recv().unwrap_or_else(|_| Err("the spawner thread ended".into())),
            Err(e) => Err(format!("cannot start the spawner thread: {e}")),
        };
        if let Err(why) = &denies_user_namespaces {
            if deny_user_namespaces {
                tracing::warn!(why, "jobs can create user namespaces");
            }
        }
        Self { work, denies_user_namespaces }
    }

    /// Runs `f` on the spawner thread.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.work
            .send(Box::new(move || {
                let _ = answer.send(f());
            }))
            .ok()?;
        answered.await.ok()
    }
}

/// The two filters: `unshare`/`clone` with `CLONE_NEWUSER` → `EPERM`;
/// `clone3` → `ENOSYS`.
fn filters() -> Result<[BpfProgram; 2], String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|e| format!("{e:?}"))?;
    let newuser = nix::libc::CLONE_NEWUSER as u64;
    let with_newuser = || -> Result<Vec<SeccompRule>, String> {
        let flag = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(newuser), newuser)
            .map_err(|e| e.to_string())?;
        Ok(vec![SeccompRule::new(vec![flag]).map_err(|e| e.to_string())?])
    };
    let deny = SeccompFilter::new(
        [(nix::libc::SYS_unshare, with_newuser()?), (nix::libc::SYS_clone, with_newuser()?)].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let clone3 = SeccompFilter::new(
        [(nix::libc::SYS_clone3, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    Ok([deny.try_into().map_err(|e| format!("{e:?}"))?, clone3.try_into().map_err(|e| format!("{e:?}"))?])
}

/// Installs both filters on the calling thread (it also gets
/// `no_new_privs`, as the job does anyway).
fn install() -> Result<(), String> {
    for program in filters()? {
        seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_filters_compile_for_this_machine() {
        let [deny, clone3] = filters().unwrap();
        assert!(!deny.is_empty() && !clone3.is_empty());
    }

    #[tokio::test]
    async fn what_the_thread_starts_cannot_make_a_user_namespace() {
        let spawner = Spawner::new(true, tokio::runtime::Handle::current());
        if spawner.denies_user_namespaces.is_err() {
            return; // a kernel without seccomp: the job's log says so
        }
        let try_userns = || {
            std::process::Command::new("unshare")
                .args(["--user", "true"])
                .stderr(std::process::Stdio::null())
                .status()
                .map(|s| s.success())
        };
        assert!(!spawner.run(try_userns).await.unwrap().unwrap(), "unshare --user must fail");
        let threads = || {
            std::process::Command::new("python3").args(["-c", "import threading, subprocess; t = threading.Thread(target=print); t.start(); t.join(); print(subprocess.run(['true']).returncode)"]).output()
        };
        let out = spawner.run(threads).await.unwrap().unwrap();
        assert!(out.status.success(), "threads and child processes still work: {out:?}");
        // the rest of the process is not filtered
        let allowed = Spawner::new(false, tokio::runtime::Handle::current());
        let here = allowed.run(try_userns).await.unwrap().unwrap();
        let host_allows = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").is_ok_and(|n| n.trim() != "0");
        if host_allows && nix::unistd::geteuid().is_root() {
            assert!(here, "unfiltered threads may");
        }
    }
}
