//! Where a job's files live under `executor.output_root`, shared by the
//! executors (which write them) and the API (which serves them):
//!
//! - `<root>/<job>/` — `JOB_OUTPUT_DIR`, the job's own files (each
//!   attempt's output is offered beside them as `jpu-attempt-<n>.log`, a
//!   range of the job's log: see `jobs::output`);
//! - `<root>/.logs/<job>.log` — stdout+stderr of every attempt, appended,
//!   each attempt opening with a `[jpu-share]` header line;
//! - `<root>/.attempts/<job>-<attempt>/` — the executor's record of one
//!   attempt (script, pids, start and exit), so a restarted server can
//!   tell what ran while it was away.
//!
//! The log is outside the output directory so a job cannot rewrite the
//! header lines or its own earlier attempts' output.

use std::path::{Path, PathBuf};

use crate::policy::JobId;

#[derive(Debug, Clone)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// `root` is made absolute so jobs see absolute paths whatever their
    /// working directory.
    pub fn new(root: &Path) -> Self {
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn output_dir(&self, job: JobId) -> PathBuf {
        self.root.join(job.to_string())
    }

    pub fn log(&self, job: JobId) -> PathBuf {
        self.root.join(".logs").join(format!("{job}.log"))
    }

    pub fn attempt_dir(&self, job: JobId, attempt: u32) -> PathBuf {
        self.root.join(".attempts").join(format!("{job}-{attempt}"))
    }

    /// The highest job id anything here is named after: an output folder
    /// (`ID`), an attempt record (`.attempts/ID-N`), a log
    /// (`.logs/ID.log`). None for an empty or missing folder.
    pub fn highest_job(&self) -> Option<JobId> {
        let names = |dir: PathBuf| -> Vec<String> {
            std::fs::read_dir(dir)
                .map(|entries| entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default()
        };
        let outputs = names(self.root.clone()).into_iter().filter_map(|n| n.parse::<JobId>().ok());
        let attempts =
            names(self.root.join(".attempts")).into_iter().filter_map(|n| n.split('-').next()?.parse::<JobId>().ok());
        let logs = names(self.root.join(".logs")).into_iter().filter_map(|n| n.strip_suffix(".log")?.parse().ok());
        outputs.chain(attempts).chain(logs).filter(|id| *id > 0).max()
    }
}

/// Creates `dir` (and its parents) and gives it `mode`: the executors'
/// own directories (records, logs), which jobs must not list or enter.
pub fn private_dir(dir: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
}

/// Creates a job's output directory (mode 0700), owned by `owner` when
/// the job runs as that uid.
pub fn create_output_dir(dir: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_absolute_and_separate_logs_from_output() {
        let layout = Layout::new(Path::new("data/jobs"));
        assert!(layout.root().is_absolute());
        assert_eq!(layout.output_dir(7), layout.root().join("7"));
        assert!(!layout.log(7).starts_with(layout.output_dir(7)));
        assert_ne!(layout.attempt_dir(7, 1), layout.attempt_dir(7, 2));
    }
}
