//! What a job may write (policy §8, `executor.max_log_bytes` and
//! `executor.max_output_bytes`): both executors measure a running
//! attempt's log and output directory every few seconds and stop it when
//! either passes its limit. The overrun is written into the attempt's
//! record first, so the end reads as `LOG_LIMIT` / `OUTPUT_LIMIT` even
//! after a restart, and into the job's log, so the researcher sees why.
//!
//! The output walk is paced ([`Pace`]): every few seconds, and at once
//! when the file system's free space fell by more than the output's
//! headroom since the last walk (one `statvfs` a second) — a walk every
//! 5 s let a job write 1.7 GB past its limit (#42 F12). When the disk
//! holding the output falls below `executor.min_free_bytes`, an attempt
//! whose output grew is stopped too: a limit set above the free disk must
//! not let one job fill it for everyone (the database may share it). The
//! local executor also sets the job's file-size limit (`RLIMIT_FSIZE`)
//! to the output limit: no single file outgrows it between two checks.

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
    /// Below this much free space on the output's file system, attempts
    /// whose output grows are stopped.
    pub min_free_bytes: u64,
}

impl Default for WriteLimits {
    fn default() -> Self {
        Self { max_log_bytes: 1 << 30, max_output_bytes: 100 << 30, min_free_bytes: 1 << 30 }
    }
}

/// A limit passed: which, by how much. `disk_free`: stopped because the
/// disk was nearly full (that much left), not for its own limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overrun {
    pub limit: OutputLimit,
    pub size: u64,
    pub max: u64,
    pub disk_free: Option<u64>,
}

/// When one attempt's output directory is walked next (see the module's
/// header): the last walk's size and the free space then.
#[derive(Debug, Default, Clone)]
pub struct Pace {
    checks: u32,
    last: Option<(u64, u64)>,
}

impl Pace {
    /// Whether this check walks the output, given the free space now.
    fn walk_now(&mut self, free: Option<u64>, limits: WriteLimits) -> bool {
        self.checks += 1;
        if self.checks.is_multiple_of(OUTPUT_EVERY) {
            return true;
        }
        let Some(free) = free else { return false };
        if free < limits.min_free_bytes {
            // only when the disk filled further since this attempt's last
            // walk: an unchanged disk is not walked every second
            return self.last.is_none_or(|(_, was)| free < was);
        }
        match self.last {
            None => true,
            Some((used, was_free)) => was_free.saturating_sub(free) > limits.max_output_bytes.saturating_sub(used),
        }
    }

    /// A walk measured `used`: whether the output grew since the last walk
    /// (the first walk only sets where it starts from).
    fn walked(&mut self, used: u64, free: Option<u64>) -> bool {
        let grew = self.last.is_some_and(|(was, _)| used > was);
        self.last = free.map(|f| (used, f)).or(self.last.map(|(_, f)| (used, f)));
        grew
    }
}

/// Free bytes (for unprivileged users) on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(path).ok()?;
    Some((st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64))
}

/// Measures job `job` (blocking: a directory walk when `pace` says so,
/// or always with `pace` `None`).
pub fn measure(layout: &Layout, job: JobId, limits: WriteLimits, pace: Option<&mut Pace>) -> Option<Overrun> {
    measure_at(layout, job, limits, pace, free_bytes(&layout.output_dir(job)))
}

/// [`measure`] with the disk's free space given.
fn measure_at(
    layout: &Layout,
    job: JobId,
    limits: WriteLimits,
    pace: Option<&mut Pace>,
    free: Option<u64>,
) -> Option<Overrun> {
    let log = std::fs::metadata(layout.log(job)).map(|m| m.len()).unwrap_or(0);
    if log > limits.max_log_bytes {
        return Some(Overrun { limit: OutputLimit::Log, size: log, max: limits.max_log_bytes, disk_free: None });
    }
    let dir = layout.output_dir(job);
    let mut fresh = Pace::default();
    let pace = match pace {
        Some(pace) => {
            if !pace.walk_now(free, limits) {
                return None;
            }
            pace
        }
        None => &mut fresh,
    };
    let used = disk_usage(&dir, limits.max_output_bytes);
    let grew = pace.walked(used, free);
    if used > limits.max_output_bytes {
        return Some(Overrun { limit: OutputLimit::Output, size: used, max: limits.max_output_bytes, disk_free: None });
    }
    let low = free.filter(|f| *f < limits.min_free_bytes);
    (low.is_some() && grew && used > 0).then_some(Overrun {
        limit: OutputLimit::Output,
        size: used,
        max: limits.max_output_bytes,
        disk_free: low,
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
    pace: Option<&mut Pace>,
) -> Option<bool> {
    let walk = layout.clone();
    let mut owned = pace.as_ref().map(|p| (*p).clone());
    let (overrun, owned) =
        tokio::task::spawn_blocking(move || (measure(&walk, job, max, owned.as_mut()), owned)).await.ok()?;
    if let (Some(pace), Some(owned)) = (pace, owned) {
        *pace = owned;
    }
    let overrun = overrun?;
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
    if let Some(free) = overrun.disk_free {
        return writeln!(
            log,
            "\n[jpu-share] the disk holding job output has only {free} bytes free (executor.min_free_bytes) and this \
             job's output directory ({} bytes) was still growing: the attempt is stopped",
            overrun.size
        );
    }
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
        let at = |log, out| WriteLimits { max_log_bytes: log, max_output_bytes: out, min_free_bytes: 0 };
        assert_eq!(measure(&layout, 1, at(1000, 1 << 20), None), None, "exactly at the log limit is allowed");
        assert_eq!(measure(&layout, 1, at(999, 1 << 20), None).map(|o| o.limit), Some(OutputLimit::Log));
        let mut pace = Pace::default();
        assert_eq!(measure(&layout, 1, at(1000, 1 << 20), Some(&mut pace)), None, "the first check walks");
        assert!(pace.last.is_some());
        assert_eq!(measure(&layout, 1, at(1000, 32 * 1024), Some(&mut pace)), None, "output walked only when due");
        let over = measure(&layout, 1, at(1000, 32 * 1024), None).unwrap();
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
        record(&layout, 1, &attempt, Overrun { limit: OutputLimit::Log, size: 2000, max: 1000, disk_free: None })
            .unwrap();
        assert_eq!(attempt.over_limit(), Some(OutputLimit::Log));
        let log = std::fs::read_to_string(layout.log(1)).unwrap();
        assert!(log.contains("reached 2000 bytes, over the limit of 1000 (executor.max_log_bytes)"), "{log}");
    }

    /// The walk comes at once when the disk's free space fell by more than
    /// the output's headroom, and every OUTPUT_EVERY checks otherwise.
    #[test]
    fn a_fast_writer_is_walked_within_a_check() {
        let limits = WriteLimits { max_log_bytes: 1 << 30, max_output_bytes: 1000, min_free_bytes: 100 };
        let mut pace = Pace::default();
        assert!(pace.walk_now(Some(10_000), limits), "the first check walks");
        pace.walked(400, Some(10_000));
        // (free now, walks?): headroom 600
        for (free, walks) in [(9_500, false), (9_401, false), (9_399, true)] {
            let mut p = pace.clone();
            assert_eq!(p.walk_now(Some(free), limits), walks, "free {free}");
        }
        assert!(pace.clone().walk_now(Some(99), limits), "a nearly full disk walks");
        let mut quiet = pace.clone();
        let walks: Vec<bool> = (0..10).map(|_| quiet.walk_now(Some(10_000), limits)).collect();
        assert_eq!(walks.iter().filter(|w| **w).count(), 2, "every OUTPUT_EVERY checks: {walks:?}");
    }

    /// Below `min_free_bytes` the attempt whose output grew is stopped, one
    /// that did not write is not.
    #[test]
    fn a_nearly_full_disk_stops_who_writes() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::create_dir_all(layout.output_dir(1)).unwrap();
        std::fs::write(layout.output_dir(1).join("a"), vec![1u8; 8192]).unwrap();
        // the disk's free space as the checks see it: under 1 GiB, falling
        let full = WriteLimits { max_log_bytes: 1 << 30, max_output_bytes: u64::MAX / 2, min_free_bytes: 1 << 30 };
        let mut pace = Pace::default();
        let at = |pace: &mut Pace, free: u64| measure_at(&layout, 1, full, Some(pace), Some(free));
        assert_eq!(at(&mut pace, 5000), None, "the first walk sets where it starts");
        assert_eq!(at(&mut pace, 5000), None, "the disk unchanged: not walked");
        assert_eq!(at(&mut pace, 4000), None, "the disk filled, but not by this job: not stopped");
        std::fs::write(layout.output_dir(1).join("b"), vec![1u8; 8192]).unwrap();
        assert_eq!(at(&mut pace, 4000), None, "written, but the disk did not fill further: not walked yet");
        let stopped = at(&mut pace, 3000).expect("it wrote and the disk filled: stopped");
        assert_eq!((stopped.limit, stopped.disk_free.is_some()), (OutputLimit::Output, true));
    }
}
