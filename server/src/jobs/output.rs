//! A job's log and output files, for its owner and admins only (lab
//! colleagues see the job, not what it wrote). Paths come from the
//! executor's [`Layout`]; a download never leaves the job's output
//! directory, whatever `..` or symlinks the job left in it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

use app::model::{JobView, Role};
use app::views::{FileEntry, LogChunk};

use super::input::FieldError;
use super::JobsError;
use crate::auth::Caller;
use crate::clock::rfc3339;
use crate::executor::layout::Layout;

/// At most this much log per request.
pub const MAX_CHUNK: u64 = 256 * 1024;
/// A listing stops after this many files.
const MAX_FILES: usize = 10_000;

pub fn check_owner(caller: &Caller, job: &JobView) -> Result<(), JobsError> {
    if caller.user.role == Role::Admin || caller.user.username == job.user {
        Ok(())
    } else {
        Err(JobsError::Forbidden("logs and output files are readable by the job's owner and admins only".into()))
    }
}

/// Bytes `offset..` of the job's log (at most [`MAX_CHUNK`]), cut at a
/// character boundary so `next_offset` can be passed back as is.
pub fn read_log(layout: &Layout, job: &JobView, offset: u64) -> Result<LogChunk, JobsError> {
    let ended = job.state.is_terminal();
    let mut file = match File::open(layout.log(job.id)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if offset > 0 {
                return Err(beyond(offset, 0));
            }
            return Ok(LogChunk { offset, data: String::new(), next_offset: offset, eof: ended });
        }
        Err(e) => return Err(JobsError::Io(e)),
    };
    let len = file.metadata().map_err(JobsError::Io)?.len();
    if offset > len {
        return Err(beyond(offset, len));
    }
    let want = (len - offset).min(MAX_CHUNK);
    let mut bytes = Vec::with_capacity(want as usize);
    file.seek(SeekFrom::Start(offset)).map_err(JobsError::Io)?;
    file.take(want).read_to_end(&mut bytes).map_err(JobsError::Io)?;
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

fn beyond(offset: u64, len: u64) -> JobsError {
    FieldError { field: "offset", message: format!("{offset} is past the end of the log ({len} bytes)") }.into()
}

/// Regular files under the job's output directory (symlinks are not
/// followed), sorted by path.
pub fn list_files(layout: &Layout, job: i64) -> Result<Vec<FileEntry>, JobsError> {
    let root = layout.output_dir(job);
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(JobsError::Io(e)),
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() && out.len() < MAX_FILES {
                let relative = entry.path().strip_prefix(&root).map(Path::to_path_buf).unwrap_or_default();
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis() as i64);
                out.push(FileEntry {
                    path: relative.to_string_lossy().into_owned(),
                    size: meta.len(),
                    modified: rfc3339(modified),
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Opens `relative` inside the job's output directory. The check is made
/// on the opened file itself, so a symlink swapped in afterwards cannot
/// lead it out.
pub fn open_file(layout: &Layout, job: i64, relative: &str) -> Result<(File, PathBuf), JobsError> {
    let clean = Path::new(relative);
    let refused = |message: &str| -> JobsError { FieldError { field: "path", message: message.to_string() }.into() };
    if relative.is_empty() || clean.is_absolute() {
        return Err(refused("must be a relative path inside the job's output directory"));
    }
    if clean.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
        return Err(refused("must not contain `..`"));
    }
    let root = layout.output_dir(job);
    let root = root.canonicalize().map_err(|_| JobsError::FileNotFound)?;
    let file = File::open(root.join(clean)).map_err(|_| JobsError::FileNotFound)?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(JobsError::Io)?;
    if !real.starts_with(&root) {
        return Err(JobsError::Forbidden("that file links outside the job's output directory".into()));
    }
    if !file.metadata().map_err(JobsError::Io)?.is_file() {
        return Err(JobsError::FileNotFound);
    }
    Ok((file, real))
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
            assert!(matches!(open_file(&layout, 1, bad), Err(JobsError::Field(_))), "{bad}");
        }
        assert!(matches!(open_file(&layout, 1, "escape"), Err(JobsError::Forbidden(_))));
        assert!(matches!(open_file(&layout, 1, "missing"), Err(JobsError::FileNotFound)));
        assert!(matches!(open_file(&layout, 1, "sub"), Err(JobsError::FileNotFound)));
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
