//! The files and facts an attempt of the local executor starts from: the
//! directories and files only the server may read, the job's env file
//! (applied after the privilege drop), the log's opening line, and what
//! this host allows (namespaces). Kept apart from the executor's
//! start/watch/cancel logic in `local`.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::StartRequest;

/// The first existing ancestor of `root` (itself included) without
/// execute permission for others.
pub(super) fn closed_ancestor(root: &Path) -> Option<std::path::PathBuf> {
    root.ancestors()
        .filter_map(|dir| fs::metadata(dir).ok().map(|m| (dir, m)))
        .find(|(_, meta)| meta.permissions().mode() & 0o001 == 0)
        .map(|(dir, _)| dir.to_path_buf())
}

pub(super) fn header(req: &StartRequest, uid: Option<u32>) -> String {
    let gpus: Vec<String> = req.gpus.iter().map(u32::to_string).collect();
    let who = match uid {
        Some(uid) => format!("as uid {uid}"),
        None => "as the server's user".to_string(),
    };
    let image = req.image.as_ref().map(|i| format!(" in workspace image {},", i.display())).unwrap_or_default();
    format!(
        "[jpu-share] attempt {} of job {} on {} ({}), GPUs {}, {},{} time limit {} min, started {}",
        req.attempt,
        req.job,
        req.node,
        req.tier,
        gpus.join(","),
        who,
        image,
        req.time_limit.as_secs() / 60,
        crate::clock::rfc3339(crate::clock::now_ms()),
    )
}

/// Whether `unshare ARGS` works here.
/// A file only the server can read (created afresh: never through a link).
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

/// The job's environment as `KEY=VALUE` entries, each ended by NUL (names
/// and values cannot hold one: input validation refuses it). A job in a
/// workspace image gets them again as `APPTAINERENV_*`, which is how a
/// clean container environment lets variables in.
/// `renumbered`: the job sees only its own GPUs (its cgroup), which CUDA
/// numbers from 0; the host's indices go in `JPU_GPU_INDICES`.
pub(super) fn env_file(req: &StartRequest, renumbered: bool) -> Vec<u8> {
    let mut env = req.env.clone();
    if renumbered {
        let local = (0..req.gpus.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        for (_, value) in env.iter_mut().filter(|(k, _)| k == "CUDA_VISIBLE_DEVICES") {
            value.clone_from(&local);
        }
        env.push(("JPU_GPU_INDICES".into(), super::env::gpu_list(&req.gpus)));
    }
    let container = if req.image.is_some() { super::container::passed_env(&env) } else { Vec::new() };
    let mut out = Vec::new();
    for (key, value) in env.iter().chain(&container) {
        out.extend_from_slice(key.as_bytes());
        out.push(b'=');
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    out
}

/// The directories a job gets fresh, private tmpfs on.
pub(super) const SCRATCH: [&str; 4] = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"];

/// The FIFO the job writes its output into and the wrapper's relay reads
/// (made here: one process less per attempt than `mkfifo`).
pub(super) fn make_fifo(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).map_err(std::io::Error::from)
}

/// FNV-1a: a stable hash (the same in every run and build).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_fifo_replaces_whatever_was_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output");
        fs::write(&path, "old").unwrap();
        make_fifo(&path).unwrap();
        let meta = fs::symlink_metadata(&path).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()));
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}
