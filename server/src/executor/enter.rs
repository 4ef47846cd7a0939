//! `jpu-share __enter-job COMMAND…`: the attempt's own namespaces, made
//! by the server's binary itself in one process.
//!
//! The wrapper (`attempt.sh`, still root) runs this right before the
//! privilege drop (`setpriv`). It used to be `unshare` → `bash` → `ip link
//! set lo up` → `mount --all`: four programs started per attempt, which
//! measured +3 ms on `submit → RUNNING` (exec of each, not the work) and
//! took CPU from the server under submit load on 2 cores. Here the same
//! steps are system calls:
//!
//! 1. `unshare` the namespaces the server asked for in the environment:
//!    `JPU_NETNS=1` (network), `JPU_PRIVATE=BYTES` (IPC and mount, with a
//!    tmpfs of BYTES over each scratch directory), `JPU_PIDNS=1` (PID,
//!    with its own /proc; this process stays outside as the waiting
//!    parent, like `unshare --fork`, and ends as its child did);
//! 2. loopback up (`SIOCSIFFLAGS`): single-node multi-GPU rendezvous,
//!    kernels and TensorBoard talk over 127.0.0.1, and there is still no
//!    other interface and no route out;
//! 3. fresh tmpfs over /tmp, /var/tmp, /dev/shm and /run/lock (their pages
//!    count against the job's memory limit; all goes with its last
//!    process), the working directory bound back if it lay under one;
//! 4. exec COMMAND (the privilege drop, then the job).
//!
//! A workspace build (#42 W2) also asks for `JPU_BUILD_CGROUP` (the
//! `cgroup.procs` files to join first: the wrapper does that for jobs) and
//! `JPU_EGRESS` (with `JPU_EGRESS_UID`): a relay forked inside the
//! namespaces listens on [`EGRESS_PORT`] of its loopback and passes each
//! connection to that Unix socket, the server's registry-only proxy
//! (`egress`) — the build's one way out.
//!
//! It runs before the server's logging and runtime exist (`main` hands it
//! over first): single-threaded, so `fork` is plain.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use nix::mount::{mount, MsFlags};
use nix::sched::{unshare, CloneFlags};
use nix::sys::signal::{self, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};

use super::attempt_files::SCRATCH;

/// The port of the egress relay on a build's own loopback.
pub const EGRESS_PORT: u16 = 3128;

/// The hidden subcommand's name (first argument of `jpu-share`).
pub const SUBCOMMAND: &str = "__enter-job";

/// Exit status when the job cannot be given what isolation it needs (the
/// wrapper's own "did not run" code).
const CANNOT: i32 = 125;

/// The binary that answers [`SUBCOMMAND`]: the running `jpu-share`, or for
/// tests and benches (which run from `target/<profile>/deps`) the one
/// cargo built beside them.
pub fn helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.file_name().is_some_and(|n| n == "jpu-share") {
        return Some(exe);
    }
    let dir = exe.parent()?;
    [dir.parent().map(|p| p.join("jpu-share")), Some(dir.join("jpu-share"))].into_iter().flatten().find(|p| p.is_file())
}

/// Whether the helper can make the namespaces `env` asks for here (it
/// runs `true` inside them).
pub fn works(helper: &Path, env: &[(&str, &str)]) -> bool {
    std::process::Command::new(helper)
        .arg(SUBCOMMAND)
        .arg("true")
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs the subcommand; returns only on failure (or, with a PID
/// namespace, as the waiting parent), with the exit status to end with.
pub fn run(command: Vec<OsString>) -> i32 {
    let Some((program, args)) = command.split_first() else {
        eprintln!("usage: jpu-share {SUBCOMMAND} COMMAND [ARG…]");
        return 2;
    };
    let net = std::env::var_os("JPU_NETNS").is_some_and(|v| v == "1");
    let pid = std::env::var_os("JPU_PIDNS").is_some_and(|v| v == "1");
    let scratch = match std::env::var("JPU_PRIVATE").ok().filter(|v| !v.is_empty()).map(|v| v.parse::<u64>()) {
        Some(Ok(bytes)) => Some(bytes),
        Some(Err(_)) => return refuse("JPU_PRIVATE is not a size in bytes"),
        None => None,
    };
    if let Some(files) = std::env::var_os("JPU_BUILD_CGROUP").filter(|v| !v.is_empty()) {
        for procs in std::env::split_paths(&files) {
            if let Err(e) = std::fs::write(&procs, std::process::id().to_string()) {
                return refuse(&format!("cannot join the build's cgroup ({}): {e}", procs.display()));
            }
        }
    }
    if let Err(why) = namespaces(net, pid, scratch.is_some()) {
        return refuse(&why);
    }
    if pid {
        match parent_of_pid_one() {
            Ok(Some(status)) => return status,
            Ok(None) => {}
            Err(why) => return refuse(&why),
        }
    }
    if net {
        if let Err(e) = loopback_up() {
            println!("[jpu-share] loopback could not be brought up in the job's network namespace: {e}");
        }
        if let Some(socket) = std::env::var_os("JPU_EGRESS").filter(|v| !v.is_empty()) {
            let uid = std::env::var("JPU_EGRESS_UID").ok().and_then(|u| u.parse::<u32>().ok());
            if let Err(why) = egress_relay(Path::new(&socket), uid) {
                return refuse(&why);
            }
        }
    }
    if let Some(bytes) = scratch {
        let keep: Vec<PathBuf> =
            std::env::var_os("JPU_KEEP").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
        if let Err(e) = private_scratch(bytes, &keep) {
            return refuse(&format!(
                "cannot give the job a private /tmp, /var/tmp, /dev/shm and /run/lock ({e}): it does not run"
            ));
        }
        if let Some(dir) = std::env::var_os("JPU_DATASETS_DIR").filter(|v| !v.is_empty()) {
            let open: Vec<(String, PathBuf)> =
                std::env::var("JPU_DATASETS_OPEN").ok().and_then(|v| serde_json::from_str(&v).ok()).unwrap_or_default();
            if let Err(e) = datasets_view(Path::new(&dir), &open) {
                return refuse(&format!("cannot show the job its lab's datasets read-only ({e}): it does not run"));
            }
        }
    }
    let e = std::process::Command::new(program).args(args).exec();
    eprintln!("[jpu-share] cannot run {}: {e}", program.to_string_lossy());
    if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

fn refuse(why: &str) -> i32 {
    println!("[jpu-share] {why}");
    CANNOT
}

/// The namespaces to make. Every mount this process makes (scratch,
/// /proc) must be in a new mount namespace: on the host's, they would
/// cover its /tmp for everyone.
fn clone_flags(net: bool, pid: bool, scratch: bool) -> CloneFlags {
    let mut flags = CloneFlags::empty();
    if net {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if scratch {
        flags |= CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWNS;
    }
    if pid {
        flags |= CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS;
    }
    flags
}

/// Step 1: the new namespaces; mounts made in them stay there.
fn namespaces(net: bool, pid: bool, scratch: bool) -> Result<(), String> {
    let flags = clone_flags(net, pid, scratch);
    if flags.is_empty() {
        return Ok(());
    }
    let host_mounts = std::fs::read_link("/proc/self/ns/mnt").ok();
    unshare(flags).map_err(|e| format!("cannot make the job's namespaces: {e}"))?;
    if flags.contains(CloneFlags::CLONE_NEWNS) {
        // the host's /tmp is never covered, whatever went wrong above
        if host_mounts.is_none() || std::fs::read_link("/proc/self/ns/mnt").ok() == host_mounts {
            return Err("the job's mount namespace could not be told from the host's".into());
        }
        mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
            .map_err(|e| format!("cannot make the job's mounts private: {e}"))?;
    }
    Ok(())
}

/// The new PID namespace begins with the next child: fork it. The child
/// (PID 1 there) mounts its /proc and goes on (`None`); this parent waits
/// and returns its exit status. SIGTERM and SIGINT are for the child (the
/// namespace's init passes them on); a child killed by a signal kills the
/// parent by the same, so the wrapper sees what it would have seen.
fn parent_of_pid_one() -> Result<Option<i32>, String> {
    let mut held = SigSet::empty();
    held.add(Signal::SIGTERM);
    held.add(Signal::SIGINT);
    let before = held.thread_swap_mask(signal::SigmaskHow::SIG_BLOCK).map_err(|e| e.to_string())?;
    // SAFETY: this process is single-threaded (the subcommand runs before
    // any runtime or thread is started), so the child may do anything.
    match unsafe { fork() }.map_err(|e| format!("cannot start the job's PID namespace: {e}"))? {
        ForkResult::Child => {
            before.thread_set_mask().map_err(|e| e.to_string())?;
            // a build's first process ends with the one waiting for it (a
            // build stopped at its time limit leaves nothing behind, even
            // where no cgroup can hold it)
            if std::env::var_os("JPU_BUILD_CGROUP").is_some() {
                let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            }
            let proc_flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
            mount(Some("proc"), "/proc", Some("proc"), proc_flags, None::<&str>)
                .map_err(|e| format!("cannot mount the job's /proc: {e}"))?;
            Ok(None)
        }
        ForkResult::Parent { child } => loop {
            match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, code)) => return Ok(Some(code)),
                Ok(WaitStatus::Signaled(_, sig, _)) => {
                    // SAFETY: restoring the default action of one signal
                    let _ = unsafe { signal::signal(sig, signal::SigHandler::SigDfl) };
                    let mut this = SigSet::empty();
                    this.add(sig);
                    let _ = this.thread_unblock();
                    let _ = signal::raise(sig);
                    return Ok(Some(128 + sig as i32));
                }
                Ok(_) => continue,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(format!("lost the job's first process: {e}")),
            }
        },
    }
}

/// Step 2: `lo` up — what `ip link set lo up` does, without the process.
fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a plain socket call; its descriptor is owned right away.
    let raw = unsafe { nix::libc::socket(nix::libc::AF_INET, nix::libc::SOCK_DGRAM | nix::libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nothing else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut request: nix::libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as nix::libc::c_char;
    }
    // SAFETY: both ioctls read and write only `request`, an ifreq as they expect.
    unsafe {
        if nix::libc::ioctl(socket.as_raw_fd(), nix::libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= nix::libc::IFF_UP as nix::libc::c_short;
        if nix::libc::ioctl(socket.as_raw_fd(), nix::libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A build's way out: a child that listens on loopback (inside the new
/// network namespace) and joins each connection to the server's proxy
/// socket, as `uid` once it listens. It dies with this process (the
/// namespace's first: the build) and with the PID namespace.
fn egress_relay(socket: &Path, uid: Option<u32>) -> Result<(), String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", EGRESS_PORT))
        .map_err(|e| format!("cannot open the build's way to the package registries: {e}"))?;
    // SAFETY: single-threaded here (see the module's header).
    match unsafe { fork() }.map_err(|e| format!("cannot start the build's egress relay: {e}"))? {
        ForkResult::Parent { .. } => Ok(()),
        ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            if let Some(uid) = uid {
                let id = nix::unistd::Uid::from_raw(uid);
                let gid = nix::unistd::Gid::from_raw(uid);
                if nix::unistd::setgroups(&[]).and(nix::unistd::setgid(gid)).and(nix::unistd::setuid(id)).is_err() {
                    std::process::exit(CANNOT);
                }
            }
            for inbound in listener.incoming().flatten() {
                let Ok(outbound) = std::os::unix::net::UnixStream::connect(socket) else { continue };
                std::thread::spawn(move || pipe_both(inbound, outbound));
            }
            std::process::exit(0)
        }
    }
}

/// Copies both ways until either side closes.
fn pipe_both(tcp: std::net::TcpStream, unix: std::os::unix::net::UnixStream) {
    let (Ok(mut tcp_in), Ok(mut unix_in)) = (tcp.try_clone(), unix.try_clone()) else { return };
    let (mut tcp_out, mut unix_out) = (tcp, unix);
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut tcp_in, &mut unix_out);
        let _ = unix_out.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut unix_in, &mut tcp_out);
    let _ = tcp_out.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

/// Step 3: a tmpfs of `bytes` over each scratch directory there is. The
/// working directory and the `keep` folders (the job's home and lab
/// share: `JPU_KEEP`) that lie under one of them (a test's temp dir) are
/// bound back in from the originals they covered, held open for that.
fn private_scratch(bytes: u64, keep: &[PathBuf]) -> std::io::Result<()> {
    let cwd = std::env::current_dir()?;
    let scratch: Vec<&Path> = SCRATCH.iter().map(Path::new).filter(|d| d.is_dir()).collect();
    let under = |p: &Path| scratch.iter().any(|d| p.starts_with(d));
    let mut originals = Vec::new();
    for path in std::iter::once(&cwd).chain(keep).filter(|p| p.is_absolute() && under(p)) {
        if let Ok(dir) = std::fs::File::open(path) {
            originals.push((path.clone(), dir));
        }
    }
    let options = format!("size={bytes},mode=1777");
    for dir in &scratch {
        mount(Some("jpu-tmp"), *dir, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some(options.as_str()))?;
    }
    for (path, original) in &originals {
        // passable by the job's user on the way down (the wrapper's umask is 077)
        let umask = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o066));
        let made = std::fs::DirBuilder::new().recursive(true).mode(0o711).create(path);
        nix::sys::stat::umask(umask);
        made?;
        let source = format!("/proc/self/fd/{}", original.as_raw_fd());
        mount(Some(source.as_str()), path, None::<&str>, MsFlags::MS_BIND, None::<&str>)?;
    }
    if under(&cwd) {
        std::env::set_current_dir(&cwd)?;
    }
    Ok(())
}

/// The datasets folder as this job sees it (policy §13): an empty tmpfs
/// over it, and each dataset open to the job's lab bound in read-only
/// (no setuid, no devices). The others, and any fetch in progress, are
/// under the tmpfs: not there for the job. The sources are opened before
/// the tmpfs covers them.
fn datasets_view(dir: &Path, open: &[(String, PathBuf)]) -> std::io::Result<()> {
    let mut sources = Vec::new();
    for (name, source) in open {
        if name.is_empty() || name.starts_with('.') || name.contains('/') {
            continue;
        }
        // a folder, not a link to one a member swapped in, nor a fifo that
        // would hold the job here (a registered folder could lie where
        // someone else writes)
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(source);
        match opened {
            Ok(folder) => sources.push((name, folder)),
            // a folder an admin removed: the job runs without it
            Err(e) => println!("[jpu-share] dataset {name} is missing ({}: {e})", source.display()),
        }
    }
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("jpu-datasets"), dir, Some("tmpfs"), flags, Some("size=1m,mode=0755"))?;
    for (name, folder) in &sources {
        let target = dir.join(name);
        std::fs::DirBuilder::new().mode(0o755).create(&target)?;
        std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        let source = format!("/proc/self/fd/{}", folder.as_raw_fd());
        mount(Some(source.as_str()), &target, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>)?;
        let read_only =
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        mount(None::<&str>, &target, None::<&str>, read_only, None::<&str>)?;
    }
    // read-only, the tmpfs itself too: a job makes nothing beside them
    mount(
        None::<&str>,
        dir,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | flags,
        Some("size=1m,mode=0755"),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mount_is_made_in_a_mount_namespace_of_its_own() {
        let (net, ipc, mnt, pid) =
            (CloneFlags::CLONE_NEWNET, CloneFlags::CLONE_NEWIPC, CloneFlags::CLONE_NEWNS, CloneFlags::CLONE_NEWPID);
        // (network, PID, private scratch) → what is unshared
        let table = [
            ((false, false, false), CloneFlags::empty()),
            ((true, false, false), net),
            ((false, false, true), ipc | mnt),
            ((false, true, false), pid | mnt),
            ((true, false, true), net | ipc | mnt),
            ((true, true, false), net | pid | mnt),
            ((false, true, true), ipc | mnt | pid),
            ((true, true, true), net | ipc | mnt | pid),
        ];
        for ((n, p, s), want) in table {
            assert_eq!(clone_flags(n, p, s), want, "network {n}, PID {p}, scratch {s}");
        }
    }
}
