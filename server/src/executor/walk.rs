//! Walking and opening inside a job's output directory, which the job can
//! change while root reads it. A walk by path follows a symlink that the
//! job swaps in for a directory between two steps (it listed another
//! user's files and root-only `.attempts/`), so every step here is made
//! relative to a directory descriptor already open: each directory is
//! opened with `O_NOFOLLOW | O_DIRECTORY` from its parent's descriptor,
//! and each entry is looked at with `AT_SYMLINK_NOFOLLOW`; a file is
//! opened with `openat2(RESOLVE_BENEATH)`, which the kernel refuses to let
//! leave the directory by any link, `..` or mount.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::fcntl::{OFlag, ResolveFlag};
use nix::sys::stat::{FileStat, Mode, SFlag};

/// How deep a walk goes: each level holds one open descriptor.
pub const MAX_DEPTH: usize = 64;

/// One entry met by [`walk`].
pub struct Entry<'a> {
    /// Relative to the walk's root.
    pub path: &'a Path,
    pub stat: &'a FileStat,
}

impl Entry<'_> {
    pub fn is_file(&self) -> bool {
        SFlag::from_bits_truncate(self.stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFREG
    }
    pub fn is_dir(&self) -> bool {
        SFlag::from_bits_truncate(self.stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFDIR
    }
}

fn open_dir_beneath(parent: &impl AsFd, name: &std::ffi::CStr) -> nix::Result<Dir> {
    Dir::openat(
        parent.as_fd(),
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// Visits every entry under `root` (depth first, never through a link),
/// until `visit` returns false or `max_entries` were seen. A missing root
/// visits nothing.
pub fn walk(root: &Path, max_entries: usize, mut visit: impl FnMut(Entry<'_>) -> bool) -> std::io::Result<()> {
    let top = match Dir::open(root, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty()) {
        Ok(dir) => dir,
        Err(nix::errno::Errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let mut seen = 0usize;
    walk_dir(top, PathBuf::new(), 0, &mut seen, max_entries, &mut visit);
    Ok(())
}

/// Returns false once the walk is to stop.
fn walk_dir(
    mut dir: Dir,
    here: PathBuf,
    depth: usize,
    seen: &mut usize,
    max_entries: usize,
    visit: &mut impl FnMut(Entry<'_>) -> bool,
) -> bool {
    let names: Vec<std::ffi::CString> = dir
        .iter()
        .flatten()
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect();
    for name in names {
        *seen += 1;
        if *seen > max_entries {
            return false;
        }
        let Ok(stat) = nix::sys::stat::fstatat(dir.as_fd(), name.as_c_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        else {
            continue;
        };
        let path = here.join(std::ffi::OsStr::from_bytes(name.as_bytes()));
        let entry = Entry { path: &path, stat: &stat };
        let descend = entry.is_dir() && depth + 1 < MAX_DEPTH;
        if !visit(entry) {
            return false;
        }
        if descend {
            // a directory swapped for a link since the stat: O_NOFOLLOW refuses it
            if let Ok(sub) = open_dir_beneath(&dir, name.as_c_str()) {
                if !walk_dir(sub, path, depth + 1, seen, max_entries, visit) {
                    return false;
                }
            }
        }
    }
    true
}

/// Opens `relative` for reading inside `root`, without blocking (a FIFO
/// would otherwise hold the thread) and never outside it, whatever links
/// lie on the way: one that leads out fails as a missing file does, so
/// the answer tells nothing of what is outside.
pub fn open_beneath(root: &Path, relative: &Path) -> std::io::Result<File> {
    let root: OwnedFd = nix::fcntl::open(root, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())?;
    let how = nix::fcntl::OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let fd = nix::fcntl::openat2(root.as_fd(), relative, how)?;
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("a/b")).unwrap();
        std::fs::write(out.join("a/b/f.txt"), "12345").unwrap();
        std::fs::create_dir_all(dir.path().join("secret")).unwrap();
        std::fs::write(dir.path().join("secret/key"), "k").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), out.join("link")).unwrap();
        std::os::unix::fs::symlink("a", out.join("inside")).unwrap();
        dir
    }

    #[test]
    fn a_walk_never_passes_through_a_link() {
        let dir = tree();
        let mut seen = Vec::new();
        walk(&dir.path().join("out"), 100, |e| {
            seen.push((e.path.display().to_string(), e.is_file(), e.is_dir()));
            true
        })
        .unwrap();
        seen.sort();
        let names: Vec<&str> = seen.iter().map(|(p, ..)| p.as_str()).collect();
        assert_eq!(names, ["a", "a/b", "a/b/f.txt", "inside", "link"]);
        assert!(seen.iter().all(|(p, file, dir)| !p.contains("key") && (p != "link" || (!file && !dir))));
        assert!(walk(&dir.path().join("absent"), 100, |_| true).is_ok());
    }

    #[test]
    fn a_walk_stops_at_its_bounds() {
        let dir = tree();
        let mut n = 0;
        walk(&dir.path().join("out"), 2, |_| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 2);
        let deep = dir.path().join("deep");
        let mut p = deep.clone();
        for _ in 0..MAX_DEPTH + 5 {
            p = p.join("d");
        }
        std::fs::create_dir_all(&p).unwrap();
        let mut levels = 0;
        walk(&deep, 1000, |_| {
            levels += 1;
            true
        })
        .unwrap();
        assert_eq!(levels, MAX_DEPTH);
    }

    #[test]
    fn an_open_stays_beneath_its_root() {
        let dir = tree();
        let out = dir.path().join("out");
        assert!(open_beneath(&out, Path::new("a/b/f.txt")).is_ok());
        assert!(open_beneath(&out, Path::new("inside/b/f.txt")).is_ok(), "a link that stays inside");
        for outside in ["link/key", "../secret/key", "/etc/passwd"] {
            let e = open_beneath(&out, Path::new(outside)).unwrap_err();
            assert_ne!(e.kind(), std::io::ErrorKind::NotFound, "{outside}: refused, not looked up: {e}");
        }
    }
}
