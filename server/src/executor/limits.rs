//! What a job may write (policy §8, `executor.max_log_bytes` and
//! `executor.max_output_bytes`): both executors measure a running
//! attempt's log and output directory every few seconds and stop it when
//! either passes its limit. The overrun is written into the attempt's
//! record first, so the end reads as `LOG_LIMIT` / `OUTPUT_LIMIT` even
//! after a restart, and into the job's log, so the researcher sees why.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::layout::Layout;
use super::record::AttemptRecord;
use crate::policy::oom::OutputLimit;
use crate::policy::JobId;

/// How often a running attempt is measured. The log costs one `stat`; the
/// output directory a walk, so it is measured every [`OUTPUT_EVERY`]th time.
/// A job may so pass a limit by what it writes in a few seconds.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);
pub const OUTPUT_EVERY: u32 = 5;
/// A walk gives up counting after this many entries (a job with millions
/// of files is measured by the first million; the rest only adds).
const MAX_WALK: usize = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteLimits {
    pub max_log_bytes: u64,
    pub max_output_bytes: u64,
}

impl Default for WriteLimits {
    fn default() -> Self {
        Self { max_log_bytes: 1 << 30, max_output_bytes: 100 << 30 }
    }
}

/// A limit passed: which, by how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overrun {
    pub limit: OutputLimit,
    pub size: u64,
    pub max: u64,
}

/// Measures job `job` (blocking: a directory walk). `with_output` also
/// walks its output directory.
pub fn measure(layout: &Layout, job: JobId, limits: WriteLimits, with_output: bool) -> Option<Overrun> {
    let log = std::fs::metadata(layout.log(job)).map(|m| m.len()).unwrap_or(0);
    if log > limits.max_log_bytes {
        return Some(Overrun { limit: OutputLimit::Log, size: log, max: limits.max_log_bytes });
    }
    if !with_output {
        return None;
    }
    let used = disk_usage(&layout.output_dir(job), limits.max_output_bytes);
    (used > limits.max_output_bytes).then_some(Overrun {
        limit: OutputLimit::Output,
        size: used,
        max: limits.max_output_bytes,
    })
}

/// Measures a running attempt (on the blocking pool: a walk) and records
/// an overrun the first time there is one. `Some(true)` when it is over a
/// limit and that was recorded now, `Some(false)` when it was recorded
/// before (or cannot be), `None` while it is within its limits.
pub async fn check(
    layout: &Layout,
    job: JobId,
    attempt: &AttemptRecord,
    max: WriteLimits,
    with_output: bool,
) -> Option<bool> {
    let walk = layout.clone();
    let overrun = tokio::task::spawn_blocking(move || measure(&walk, job, max, with_output)).await.ok().flatten()?;
    if attempt.over_limit().is_some() {
        return Some(false);
    }
    match record(layout, job, attempt, overrun) {
        Ok(()) => Some(true),
        Err(e) => {
            tracing::warn!(job, error = %e, "cannot record an attempt's overrun");
            Some(false)
        }
    }
}

/// Bytes on disk under `dir` (allocated blocks, so sparse files count as
/// what they take), never following links (see [`super::walk`]); stops
/// once past `enough`.
fn disk_usage(dir: &Path, enough: u64) -> u64 {
    let mut total = 0u64;
    let _ = super::walk::walk(dir, MAX_WALK, |entry| {
        total += (entry.stat.st_blocks.max(0) as u64) * 512;
        total <= enough
    });
    total
}

/// Marks the attempt as stopped for `overrun` and tells its log why; the
/// caller then stops it.
pub fn record(layout: &Layout, job: JobId, attempt: &AttemptRecord, overrun: Overrun) -> std::io::Result<()> {
    attempt.write("over_limit", overrun.limit.reason())?;
    let (what, setting) = match overrun.limit {
        OutputLimit::Log => ("log", "executor.max_log_bytes"),
        OutputLimit::Output => ("output directory", "executor.max_output_bytes"),
    };
    let mut log = std::fs::OpenOptions::new().append(true).open(layout.log(job))?;
    writeln!(
        log,
        "\n[jpu-share] this job's {what} reached {} bytes, over the limit of {} ({setting}): the attempt is stopped",
        overrun.size, overrun.max
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_passed_only_past_their_edge() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::create_dir_all(layout.output_dir(1).join("sub")).unwrap();
        std::fs::create_dir_all(layout.log(1).parent().unwrap()).unwrap();
        std::fs::write(layout.log(1), vec![b'x'; 1000]).unwrap();
        std::fs::write(layout.output_dir(1).join("sub/big"), vec![1u8; 64 * 1024]).unwrap();
        let at = |log, out| WriteLimits { max_log_bytes: log, max_output_bytes: out };
        assert_eq!(measure(&layout, 1, at(1000, 1 << 20), true), None, "exactly at the log limit is allowed");
        assert_eq!(measure(&layout, 1, at(999, 1 << 20), true).map(|o| o.limit), Some(OutputLimit::Log));
        assert_eq!(measure(&layout, 1, at(1000, 32 * 1024), false), None, "output measured only when asked");
        let over = measure(&layout, 1, at(1000, 32 * 1024), true).unwrap();
        assert_eq!(over.limit, OutputLimit::Output);
        assert!(over.size >= 64 * 1024, "{over:?}");
    }

    #[test]
    fn an_overrun_is_recorded_for_the_end_and_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::create_dir_all(layout.log(1).parent().unwrap()).unwrap();
        std::fs::write(layout.log(1), "output").unwrap();
        let attempt = AttemptRecord::new(layout.attempt_dir(1, 1));
        std::fs::create_dir_all(attempt.dir()).unwrap();
        assert_eq!(attempt.over_limit(), None);
        record(&layout, 1, &attempt, Overrun { limit: OutputLimit::Log, size: 2000, max: 1000 }).unwrap();
        assert_eq!(attempt.over_limit(), Some(OutputLimit::Log));
        let log = std::fs::read_to_string(layout.log(1)).unwrap();
        assert!(log.contains("reached 2000 bytes, over the limit of 1000 (executor.max_log_bytes)"), "{log}");
    }
}
