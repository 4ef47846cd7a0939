//! A job's log and output files, for its owner and admins only (lab
//! colleagues see the job, not what it wrote). Paths come from the
//! executor's [`Layout`]; a download never leaves the job's output
//! directory, whatever `..` or symlinks the job left in it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use app::model::views::{FileEntry, LogChunk};
use app::model::{JobView, Role};
use app::{i18n::Msg, msg};

use super::field::FieldError;
use crate::auth::Caller;
use crate::clock::rfc3339;
use crate::executor::layout::Layout;
use crate::services::ServiceError;

/// What the caller is told when a path names no file of the job's.
fn no_such_file() -> ServiceError {
    ServiceError::NotFound(msg!("err-no-such-file"))
}

/// Reading the job's output failed on the host: the server's fault.
fn output_io(e: std::io::Error) -> ServiceError {
    ServiceError::Internal(format!("job output: {e}"))
}

/// At most this much log per request.
pub const MAX_CHUNK: u64 = 256 * 1024;
/// A listing looks at no more than this many entries of a job's
/// directory tree (a job with 150,000 files made its console page 1.9 MB);
/// what lies beyond is downloadable by path, not listed.
const MAX_WALK: usize = 100_000;
/// Files per page: the default and the most one request may ask for.
pub const DEFAULT_FILES_PAGE: usize = 1_000;
pub const MAX_FILES_PAGE: usize = 10_000;

/// One page of a job's files, by path: `limit` files after `after`.
pub fn list_files_page(
    layout: &Layout,
    job: i64,
    after: Option<&str>,
    limit: usize,
) -> Result<(Vec<FileEntry>, usize), ServiceError> {
    let all = list_files(layout, job)?;
    let total = all.len();
    let start = after.map_or(0, |a| all.partition_point(|f| f.path.as_str() <= a));
    Ok((all.into_iter().skip(start).take(limit).collect(), total))
}

pub fn check_owner(caller: &Caller, job: &JobView) -> Result<(), ServiceError> {
    if caller.user.role == Role::Admin || caller.user.username == job.user {
        Ok(())
    } else {
        Err(ServiceError::Forbidden(msg!("err-output-not-yours")))
    }
}

/// Bytes `offset..` of the job's log (at most [`MAX_CHUNK`]), cut at a
/// character boundary so `next_offset` can be passed back as is.
pub fn read_log(layout: &Layout, job: &JobView, offset: u64) -> Result<LogChunk, ServiceError> {
    let ended = job.state.is_terminal();
    let Some((mut file, len)) = open_log(layout, job.id)? else {
        if offset > 0 {
            return Err(beyond(offset, 0));
        }
        return Ok(LogChunk { offset, data: String::new(), next_offset: offset, eof: ended });
    };
    if offset > len {
        return Err(beyond(offset, len));
    }
    let mut bytes = read_at(&mut file, offset, (len - offset).min(MAX_CHUNK))?;
    let data = match std::str::from_utf8(&bytes) {
        Ok(text) => text.to_string(),
        // a character split by the chunk's end: leave it for the next read
        Err(e) if e.error_len().is_none() && offset + (bytes.len() as u64) < len => {
            bytes.truncate(e.valid_up_to());
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    };
    let next_offset = offset + bytes.len() as u64;
    Ok(LogChunk { offset, data, next_offset, eof: ended && next_offset >= len })
}

/// The console's view of a log: at most this much is shown at once.
pub const TAIL_CHUNK: u64 = 64 * 1024;

/// The end of the job's log: the [`TAIL_CHUNK`] bytes before `end` (the
/// log's current end when None), starting at a line's beginning where
/// one is in reach. Its `offset` is where a reader pages back from.
pub fn read_log_tail(layout: &Layout, job: &JobView, end: Option<u64>) -> Result<LogChunk, ServiceError> {
    let opened = open_log(layout, job.id)?;
    let len = opened.as_ref().map_or(0, |(_, len)| *len);
    let end = end.unwrap_or(len);
    if end > len {
        return Err(beyond(end, len));
    }
    let Some((mut file, _)) = opened.filter(|_| end > 0) else {
        return Ok(LogChunk { offset: 0, data: String::new(), next_offset: 0, eof: job.state.is_terminal() });
    };
    let start = end.saturating_sub(TAIL_CHUNK);
    let bytes = read_at(&mut file, start, end - start)?;
    // a window that begins mid-line begins at the next line instead
    let skip = if start > 0 { bytes.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1) } else { 0 };
    let data = String::from_utf8_lossy(&bytes[skip..]).into_owned();
    Ok(LogChunk { offset: start + skip as u64, data, next_offset: end, eof: job.state.is_terminal() && end == len })
}

/// The job's log, open, with its length; None while it has none.
fn open_log(layout: &Layout, job: i64) -> Result<Option<(File, u64)>, ServiceError> {
    match File::open(layout.log(job)) {
        Ok(file) => {
            let len = file.metadata().map_err(output_io)?.len();
            Ok(Some((file, len)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(output_io(e)),
    }
}

/// `len` bytes of `file` from `start` (fewer at its end).
fn read_at(file: &mut File, start: u64, len: u64) -> Result<Vec<u8>, ServiceError> {
    let mut bytes = Vec::with_capacity(len as usize);
    file.seek(SeekFrom::Start(start)).map_err(output_io)?;
    file.take(len).read_to_end(&mut bytes).map_err(output_io)?;
    Ok(bytes)
}

/// A file's modification time as RFC 3339 (the epoch when unknown).
fn modified(meta: &std::fs::Metadata) -> String {
    let ms =
        meta.modified().ok().and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis());
    rfc3339(ms as i64)
}

fn beyond(offset: u64, len: u64) -> ServiceError {
    FieldError { field: "offset", message: msg!("err-past-log", offset = offset, len = len) }.into()
}

/// Regular files under the job's output directory (symlinks are not
/// followed) and each attempt's output, sorted by path.
pub fn list_files(layout: &Layout, job: i64) -> Result<Vec<FileEntry>, ServiceError> {
    let mut out = Vec::new();
    crate::executor::walk::walk(&layout.output_dir(job), MAX_WALK, |entry| {
        if entry.is_file() {
            out.push(FileEntry {
                path: entry.path.to_string_lossy().into_owned(),
                size: entry.stat.st_size.max(0) as u64,
                modified: rfc3339(entry.stat.st_mtime.saturating_mul(1000)),
            });
        }
        true
    })
    .map_err(output_io)?;
    let ranges = attempt_ranges(layout, job);
    if !ranges.is_empty() {
        let log_modified = std::fs::metadata(layout.log(job)).map(|m| modified(&m)).unwrap_or_else(|_| rfc3339(0));
        for (n, start, end) in ranges {
            out.retain(|f| f.path != attempt_log_name(n));
            out.push(FileEntry { path: attempt_log_name(n), size: end - start, modified: log_modified.clone() });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A file to send: `len` bytes of `file` from `start`.
#[derive(Debug)]
pub struct Download {
    pub file: File,
    pub name: String,
    pub start: u64,
    pub len: u64,
}

/// The name under which attempt `n`'s output is offered.
fn attempt_log_name(n: u32) -> String {
    format!("jpu-attempt-{n}.log")
}

/// Each attempt's output, `(attempt, start, end)` in the job's log: the
/// executors record where each attempt began, so an attempt's output is
/// served from the log itself, never copied (a copy doubled the disk a
/// large log takes, and a 1.5 GB one stalled the server for 1.7 s).
fn attempt_ranges(layout: &Layout, job: i64) -> Vec<(u32, u64, u64)> {
    let log_len = std::fs::metadata(layout.log(job)).map(|m| m.len()).unwrap_or(0);
    let starts: Vec<u64> = (1..)
        .map(|n| crate::executor::record::AttemptRecord::new(layout.attempt_dir(job, n)))
        .take_while(|r| r.dir().is_dir())
        .map(|r| r.log_offset().min(log_len))
        .collect();
    (0..starts.len())
        .map(|i| {
            let end = starts.get(i + 1).copied().unwrap_or(log_len).max(starts[i]);
            (i as u32 + 1, starts[i], end)
        })
        .collect()
}

/// Opens `relative` inside the job's output directory, or an attempt's
/// output (`jpu-attempt-<n>.log`). The checks are made on the opened file
/// itself, so a symlink swapped in afterwards cannot lead it out, and it
/// is opened without blocking: a FIFO the job left there would otherwise
/// hold a server thread until someone writes to it.
pub fn open_file(layout: &Layout, job: i64, relative: &str) -> Result<Download, ServiceError> {
    let clean = Path::new(relative);
    let refused = |message: Msg| -> ServiceError { FieldError { field: "path", message }.into() };
    if relative.is_empty() || clean.is_absolute() {
        return Err(refused(msg!("err-path-relative")));
    }
    if clean.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(refused(msg!("err-path-dotdot")));
    }
    if let Some((_, start, end)) =
        attempt_ranges(layout, job).into_iter().find(|(n, ..)| attempt_log_name(*n) == relative)
    {
        let file = File::open(layout.log(job)).map_err(output_io)?;
        return Ok(Download { file, name: relative.to_string(), start, len: end - start });
    }
    let file = crate::executor::walk::open_beneath(&layout.output_dir(job), clean).map_err(|_| no_such_file())?;
    let meta = file.metadata().map_err(output_io)?;
    if !meta.is_file() {
        return Err(no_such_file());
    }
    let name = clean.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(Download { file, name, start: 0, len: meta.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout_with_job() -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        std::fs::create_dir_all(layout.output_dir(1).join("sub")).unwrap();
        std::fs::write(layout.output_dir(1).join("sub/a.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("secret"), "no").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), layout.output_dir(1).join("escape")).unwrap();
        (dir, layout)
    }

    #[test]
    fn files_inside_are_served_and_escapes_refused() {
        let (_dir, layout) = layout_with_job();
        assert!(open_file(&layout, 1, "sub/a.txt").is_ok());
        assert!(open_file(&layout, 1, "./sub/a.txt").is_ok());
        for bad in ["../1/sub/a.txt", "sub/../../secret", "/etc/passwd", ""] {
            assert!(matches!(open_file(&layout, 1, bad), Err(ServiceError::Validation(_))), "{bad}");
        }
        // a link out answers as a missing file: nothing is told of what is outside
        assert!(
            matches!(open_file(&layout, 1, "escape"), Err(ServiceError::NotFound(m)) if m.key() == "err-no-such-file")
        );
        assert!(
            matches!(open_file(&layout, 1, "missing"), Err(ServiceError::NotFound(m)) if m.key() == "err-no-such-file")
        );
        assert!(
            matches!(open_file(&layout, 1, "sub"), Err(ServiceError::NotFound(m)) if m.key() == "err-no-such-file")
        );
    }

    #[test]
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let (_dir, layout) = layout_with_job();
        assert!(std::process::Command::new("mkfifo")
            .arg(layout.output_dir(1).join("pipe"))
            .status()
            .unwrap()
            .success());
        assert!(
            matches!(open_file(&layout, 1, "pipe"), Err(ServiceError::NotFound(m)) if m.key() == "err-no-such-file")
        );
    }

    #[test]
    fn each_attempts_output_is_a_range_of_the_log() {
        let (_dir, layout) = layout_with_job();
        let first = "[jpu-share] attempt 1\nfirst\n";
        std::fs::create_dir_all(layout.log(1).parent().unwrap()).unwrap();
        std::fs::write(layout.log(1), format!("{first}[jpu-share] attempt 2\nsecond\n")).unwrap();
        for (n, offset) in [(1, 0), (2, first.len())] {
            let record = crate::executor::record::AttemptRecord::new(layout.attempt_dir(1, n));
            std::fs::create_dir_all(record.dir()).unwrap();
            record.write("log_offset", &offset.to_string()).unwrap();
        }
        let read = |name: &str| {
            let d = open_file(&layout, 1, name).unwrap();
            let mut text = String::new();
            let mut file = d.file;
            file.seek(SeekFrom::Start(d.start)).unwrap();
            file.take(d.len).read_to_string(&mut text).unwrap();
            text
        };
        assert_eq!(read("jpu-attempt-1.log"), first);
        assert_eq!(read("jpu-attempt-2.log"), "[jpu-share] attempt 2\nsecond\n");
        let listed: Vec<String> = list_files(&layout, 1).unwrap().into_iter().map(|f| f.path).collect();
        assert_eq!(listed, ["jpu-attempt-1.log", "jpu-attempt-2.log", "sub/a.txt"]);
        assert!(
            matches!(open_file(&layout, 1, "jpu-attempt-3.log"), Err(ServiceError::NotFound(m)) if m.key() == "err-no-such-file")
        );
    }

    #[test]
    fn listing_shows_regular_files_only() {
        let (_dir, layout) = layout_with_job();
        let files = list_files(&layout, 1).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["sub/a.txt"]);
        assert_eq!(files[0].size, 5);
        assert!(list_files(&layout, 2).unwrap().is_empty());
    }
}
