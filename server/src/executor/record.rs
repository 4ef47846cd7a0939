//! The on-disk record of one local attempt (see [`super::layout`]): what
//! the server wrote before starting it and what the attempt wrapper wrote
//! while it ran. Reading it tells a restarted server whether an attempt
//! never started, still runs, or ended and how.

use std::path::{Path, PathBuf};

use std::fs;
use std::io::{Read, Seek, SeekFrom};

use crate::policy::oom::{EndSignal, OutputLimit, OOM_TAIL_BYTES};

/// Exit status `timeout` gives when it stopped the job at its limit
/// (124 after SIGTERM, 137 when SIGKILL was needed after the grace).
const TIMEOUT_EXIT: i32 = 124;
const KILLED_EXIT: i32 = 137;

#[derive(Debug, Clone)]
pub struct AttemptRecord {
    dir: PathBuf,
}

/// How a recorded attempt stands.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordState {
    /// Nothing of the job ran (no process was started for it).
    NotStarted,
    /// Its process group is alive.
    Running { started_ms: i64, pgid: i32 },
    /// The wrapper recorded its end.
    Ended { started_ms: i64, ended_ms: i64, end: EndSignal },
    /// It was started but its processes are gone without a recorded end
    /// (the machine rebooted, or someone killed the wrapper).
    Lost { started_ms: i64 },
}

impl AttemptRecord {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn script(&self) -> PathBuf {
        self.dir.join("script.sh")
    }

    fn read(&self, name: &str) -> Option<String> {
        read_small(&self.dir.join(name))
    }

    fn read_i64(&self, name: &str) -> Option<i64> {
        self.read(name)?.trim().parse().ok()
    }

    /// A marker the wrapper writes in place (`started`, `pid`, `exit`):
    /// there once its line is whole, so a half-written one reads as absent.
    fn read_marker(&self, name: &str) -> Option<String> {
        self.read(name).filter(|text| text.ends_with('\n'))
    }

    fn read_marker_i64(&self, name: &str) -> Option<i64> {
        self.read_marker(name)?.trim().parse().ok()
    }

    /// Writes one value as a whole line (renamed into place), readable by
    /// the server alone.
    pub fn write(&self, name: &str, value: &str) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let tmp = self.dir.join(format!("{name}.tmp"));
        let _ = std::fs::remove_file(&tmp);
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        file.write_all(format!("{value}\n").as_bytes())?;
        std::fs::rename(tmp, self.dir.join(name))
    }

    /// Whether the record is another job's: it names an owner, and not
    /// `owner` (records made before owners were written name none, and
    /// stay this job's).
    pub fn foreign(&self, owner: &str) -> bool {
        !owner.is_empty() && self.read("owner").is_some_and(|o| o.trim_end() != owner)
    }

    /// Moves a foreign record out of the way (kept beside the others, for
    /// an admin to look at), so this job's attempt starts afresh.
    pub fn set_aside(&self) -> std::io::Result<()> {
        let aside = self.dir.with_extension(format!("foreign-{}", crate::clock::now_ms()));
        tracing::warn!(record = %self.dir.display(), aside = %aside.display(),
            "an attempt record of another job (a restored database?) was set aside, not adopted");
        std::fs::rename(&self.dir, aside)
    }

    /// Where the attempt's output starts in the job's log.
    pub fn log_offset(&self) -> u64 {
        self.read_i64("log_offset").unwrap_or(0).max(0) as u64
    }

    pub fn limit_ms(&self) -> Option<i64> {
        self.read_i64("limit_seconds").map(|s| s * 1000)
    }

    pub fn wrapper_pid(&self) -> Option<i32> {
        self.read_i64("wrapper_pid").map(|p| p as i32)
    }

    /// The job's process group (the `timeout` process leads it).
    pub fn pgid(&self) -> Option<i32> {
        self.read_marker_i64("pid").map(|p| p as i32)
    }

    pub fn started_ms(&self) -> Option<i64> {
        self.read_marker_i64("started")
    }

    /// Ends the attempt's part of the job log with one plain line saying
    /// how it ended (once: a restart that reports the end again adds
    /// nothing). Failures are logged, never fatal.
    pub fn close_log(&self, log: &Path, attempt: u32, end: EndSignal) {
        // nothing ran (a cancel before the start), or said so already
        if !self.dir.is_dir() || self.dir.join("log_closed").exists() {
            return;
        }
        let how = match end {
            EndSignal::Exited(code) => format!("exited with code {code}"),
            EndSignal::HostOomKilled => "was killed for using more memory than it may (HOST_OOM)".into(),
            EndSignal::TimeLimit => "was stopped at its time limit".into(),
            EndSignal::Cancelled => "was cancelled".into(),
            EndSignal::Lost => "vanished without an end being recorded".into(),
            EndSignal::OverLimit(limit) => format!("was stopped for writing past a limit ({})", limit.reason()),
        };
        let appended = (|| -> std::io::Result<()> {
            use std::io::Write;
            let mut file = fs::OpenOptions::new().read(true).append(true).open(log)?;
            let len = file.metadata()?.len();
            let mut last = [b'\n'];
            if len > 0 {
                file.seek(SeekFrom::Start(len - 1))?;
                file.read_exact(&mut last)?;
            }
            let gap = if last[0] == b'\n' { "" } else { "\n" };
            file.write_all(format!("{gap}[jpu-share] attempt {attempt} {how}\n").as_bytes())
        })();
        match appended.and_then(|()| self.write("log_closed", "")) {
            Ok(()) => {}
            Err(e) => tracing::warn!(dir = %self.dir.display(), error = %e, "cannot end the job's log"),
        }
    }

    pub fn mark_cancelled(&self) -> std::io::Result<()> {
        self.write("cancelled", "")
    }

    pub fn cancelled(&self) -> bool {
        self.dir.join("cancelled").exists()
    }

    /// `(exit status, ended at, OOM kills in its cgroup)` as the wrapper
    /// wrote them (records from before cgroups have no third field).
    fn exit(&self) -> Option<(i32, i64, u64)> {
        let text = self.read_marker("exit")?;
        let mut parts = text.split_whitespace();
        let code = parts.next()?.parse().ok()?;
        let ended = parts.next()?.parse().ok()?;
        let oom_kills = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        Some((code, ended, oom_kills))
    }

    pub fn state(&self) -> RecordState {
        let started = self.started_ms();
        if let Some((code, ended_ms, oom_kills)) = self.exit() {
            let started_ms = started.unwrap_or(ended_ms);
            return RecordState::Ended {
                started_ms,
                ended_ms,
                end: self.classify(code, ended_ms - started_ms, oom_kills),
            };
        }
        match (self.pgid(), started) {
            (Some(pgid), Some(started_ms)) if process_alive(pgid) => RecordState::Running { started_ms, pgid },
            // the wrapper is between starting the job and writing its pid,
            // or between the job's end and writing the exit: still ours
            _ if self.wrapper_pid().is_some_and(process_alive) => {
                RecordState::Running { started_ms: started.unwrap_or_else(crate::clock::now_ms), pgid: 0 }
            }
            (_, Some(started_ms)) => RecordState::Lost { started_ms },
            (_, None) => RecordState::NotStarted,
        }
    }

    /// A RAM overrun (the kernel killed something of the job for its
    /// cgroup's memory limit); a time limit only when the limit was reached
    /// (a job may exit 124 by itself); else its exit status — unless the
    /// server decided the end itself ([`decided_end`](Self::decided_end)).
    fn classify(&self, code: i32, ran_ms: i64, oom_kills: u64) -> EndSignal {
        let at_limit = self.limit_ms().is_some_and(|limit| ran_ms >= limit - 500);
        let seen = if oom_kills > 0 {
            EndSignal::HostOomKilled
        } else if at_limit && (code == TIMEOUT_EXIT || code == KILLED_EXIT) {
            EndSignal::TimeLimit
        } else {
            EndSignal::Exited(code)
        };
        self.decided_end(seen)
    }

    /// The limit the attempt was stopped for, if it was (written by
    /// `limits::record`).
    pub fn over_limit(&self) -> Option<OutputLimit> {
        match read_small(&self.dir().join("over_limit"))?.trim() {
            "LOG_LIMIT" => Some(OutputLimit::Log),
            "OUTPUT_LIMIT" => Some(OutputLimit::Output),
            _ => None,
        }
    }

    /// What the server decided about an attempt outweighs how the
    /// executor saw it end: a cancel first, then a stop for writing past a
    /// limit (both executors).
    pub fn decided_end(&self, seen: EndSignal) -> EndSignal {
        if self.cancelled() {
            EndSignal::Cancelled
        } else if let Some(limit) = self.over_limit() {
            EndSignal::OverLimit(limit)
        } else {
            seen
        }
    }
}

/// Longest record file read: each holds one number or word.
const MAX_RECORD_FILE: u64 = 4096;

/// Opens `path` for reading if it is a plain file: not through a link,
/// and not a FIFO or device that would block or feed the reader forever.
/// What a job leaves (its record on Slurm, its log, a session's runtime
/// file) is opened this way (#42 W1).
pub fn open_plain(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file =
        fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK).open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a plain file"))
    }
}

/// A record file's text, read no further than [`MAX_RECORD_FILE`]: on
/// Slurm the attempt's wrapper runs as the job's user, so what lies here
/// is as hostile as the job.
pub fn read_small(path: &Path) -> Option<String> {
    let mut text = String::new();
    open_plain(path).ok()?.take(MAX_RECORD_FILE).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Alive and not a zombie (an orphaned wrapper may never be reaped when
/// PID 1 does not reap).
pub fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // the state letter follows the parenthesised command name
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The attempt's output from `from`, at most its last 64 KiB.
pub fn read_log_tail(log: &Path, from: u64) -> String {
    let Ok(mut file) = open_plain(log) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = from.max(len.saturating_sub(OOM_TAIL_BYTES as u64));
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_ok() {
        // the log may grow while it is read: no more than the tail
        let _ = file.take(OOM_TAIL_BYTES as u64).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_record_of_another_job_is_foreign_and_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let record = AttemptRecord::new(dir.path().join("2-1"));
        std::fs::create_dir(record.dir()).unwrap();
        assert!(!record.foreign("job 2 attempt 1 submitted 5"), "no owner written: an older record, kept");
        record.write("owner", "job 2 attempt 1 submitted 5").unwrap();
        assert!(!record.foreign("job 2 attempt 1 submitted 5"));
        assert!(record.foreign("job 2 attempt 1 submitted 9"), "the same id, another job");
        assert!(!record.foreign(""), "a request that names no owner (tests) adopts");
        record.set_aside().unwrap();
        assert!(!record.dir().exists());
        let aside: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(aside[0].to_string_lossy().starts_with("2-1.foreign-"), "{aside:?}");
    }

    use super::*;

    fn record() -> (tempfile::TempDir, AttemptRecord) {
        let dir = tempfile::tempdir().unwrap();
        let record = AttemptRecord::new(dir.path().to_path_buf());
        (dir, record)
    }

    #[test]
    fn the_log_ends_with_one_plain_line_once() {
        let (dir, r) = record();
        let log = dir.path().join("job.log");
        fs::write(&log, "working... no newline").unwrap();
        r.close_log(&log, 2, EndSignal::TimeLimit);
        r.close_log(&log, 2, EndSignal::TimeLimit);
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "working... no newline\n[jpu-share] attempt 2 was stopped at its time limit\n"
        );
    }

    #[test]
    fn an_empty_record_never_started() {
        let (_d, r) = record();
        assert_eq!(r.state(), RecordState::NotStarted);
    }

    #[test]
    fn a_started_attempt_whose_processes_are_gone_is_lost() {
        let (_d, r) = record();
        r.write("started", "1000").unwrap();
        r.write("pid", "2147483000").unwrap();
        assert_eq!(r.state(), RecordState::Lost { started_ms: 1000 });
    }

    #[test]
    fn a_marker_caught_half_written_counts_as_not_yet_written() {
        let (_d, r) = record();
        r.write("started", "1000").unwrap();
        // the wrapper's printf of "0 5000\n" seen before its last bytes
        std::fs::write(r.dir().join("exit"), "0 50").unwrap();
        std::fs::write(r.dir().join("pid"), "2147483").unwrap();
        assert_eq!(r.state(), RecordState::Lost { started_ms: 1000 }, "no end, no live process group yet");
        std::fs::write(r.dir().join("exit"), "0 5000\n").unwrap();
        assert!(matches!(r.state(), RecordState::Ended { ended_ms: 5000, .. }));
    }

    #[test]
    fn exit_records_are_classified() {
        let cases: &[(&str, bool, &str, EndSignal)] = &[
            ("0 5000", false, "60", EndSignal::Exited(0)),
            ("3 5000", false, "60", EndSignal::Exited(3)),
            ("124 61000", false, "60", EndSignal::TimeLimit),
            ("124 5000", false, "60", EndSignal::Exited(124)),
            ("137 5000 1", false, "60", EndSignal::HostOomKilled),
            ("0 5000 1", false, "60", EndSignal::HostOomKilled),
            ("137 5000 1", true, "60", EndSignal::Cancelled),
            ("137 62000", false, "60", EndSignal::TimeLimit),
            ("137 5000", false, "60", EndSignal::Exited(137)),
            ("143 5000", true, "60", EndSignal::Cancelled),
        ];
        for (exit, cancelled, limit, want) in cases {
            let (_d, r) = record();
            r.write("started", "1000").unwrap();
            r.write("limit_seconds", limit).unwrap();
            r.write("exit", exit).unwrap();
            if *cancelled {
                r.mark_cancelled().unwrap();
            }
            match r.state() {
                RecordState::Ended { end, started_ms, .. } => {
                    assert_eq!(end, *want, "exit {exit}");
                    assert_eq!(started_ms, 1000);
                }
                other => panic!("exit {exit}: {other:?}"),
            }
        }
    }

    #[test]
    fn this_process_is_alive_and_a_free_pid_is_not() {
        assert!(process_alive(std::process::id() as i32));
        assert!(!process_alive(0));
        assert!(!process_alive(2147483000));
    }
}
