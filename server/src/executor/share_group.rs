//! A lab share moving to another gid (policy §13: the lab's group in the
//! directory replaces the one the platform handed out; a lab moved off a
//! gid the directory gives another lab): what members made in it under
//! the old gid takes the new one, so members keep each other's files.
//!
//! The share is members' ground: while the walk runs, any entry may be a
//! planted link, a hard link to a file elsewhere, a tree deeper than any
//! walk should follow, or a folder renamed ahead of the walk again and
//! again to be listed twice. So every entry is opened relative to its
//! folder's descriptor without following a link (`O_PATH | O_NOFOLLOW`),
//! checked and changed through that descriptor (a link's own group, never
//! its target's); a file with several names is left alone (one may be
//! outside the share); nothing on another device is touched; each folder
//! is walked once (by device and inode), listed as it is read (never held
//! whole), [`MAX_DEPTH`] deep and [`MAX_ENTRIES`] entries at most. A walk
//! cut short says so, and the caller walks again later (the database
//! keeps what is pending, `db::lab_gids`).

use std::collections::HashSet;
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

use nix::dir::{Dir, OwningIter};
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, FileStat, Mode, SFlag};

/// Folders deeper than this keep their old group (the warning says so).
const MAX_DEPTH: usize = 64;
/// A walk looks at this many entries at most; the rest waits for the next.
const MAX_ENTRIES: u64 = 10_000_000;
/// Folders a walk remembers having listed (about 40 bytes each), so a
/// folder renamed ahead of the walk is not listed again.
const MAX_FOLDERS: usize = 1_000_000;

/// What a regroup changed and left.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Regrouped {
    pub changed: u64,
    /// Files with several names, left with the old group.
    pub linked: u64,
    pub too_deep: u64,
    /// Entries that could not be changed or folders not listed.
    pub failed: u64,
    /// Every entry was seen and changed (the walk was not cut short).
    pub complete: bool,
}

/// Gives the share's own folder the group `gid` (root's group, 0, when
/// the lab has none: never a gid another lab may hold).
pub fn set_root_group(share: &File, gid: Option<u32>) -> std::io::Result<()> {
    std::os::unix::fs::fchown(share, Some(0), Some(gid.unwrap_or(0)))
}

/// Gives every entry in `share` whose group is `from` the group `to`.
pub fn regroup(share: &File, from: u32, to: u32) -> std::io::Result<Regrouped> {
    let top = fstat(share)?;
    let mut done = Regrouped { complete: true, ..Default::default() };
    let mut visited: HashSet<(u64, u64)> = HashSet::from([(top.st_dev, top.st_ino)]);
    let mut stack: Vec<OwningIter> = vec![listing(share.as_fd())?];
    let mut seen: u64 = 0;
    while let Some(level) = stack.last_mut() {
        let Some(entry) = level.next() else {
            stack.pop();
            continue;
        };
        // a listing that fails once fails again (readdir keeps its error):
        // that folder is left, and the walk is not complete
        let Ok(entry) = entry else {
            stack.pop();
            done.failed += 1;
            done.complete = false;
            continue;
        };
        let name = entry.file_name().to_owned();
        if name.as_bytes() == b"." || name.as_bytes() == b".." {
            continue;
        }
        seen += 1;
        if seen > MAX_ENTRIES {
            done.complete = false;
            break;
        }
        // SAFETY: the listing's descriptor stays open while `level` lives
        let parent = unsafe { BorrowedFd::borrow_raw(level.as_raw_fd()) };
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let node = match openat(parent, name.as_c_str(), flags, Mode::empty()) {
            Ok(node) => node,
            // gone or renamed since it was listed: nothing to do for it here
            Err(nix::errno::Errno::ENOENT) => continue,
            Err(_) => {
                done.failed += 1;
                done.complete = false;
                continue;
            }
        };
        let Ok(stat) = fstat(&node) else {
            done.failed += 1;
            done.complete = false;
            continue;
        };
        if stat.st_dev != top.st_dev {
            continue;
        }
        let is_dir = kind(&stat) == SFlag::S_IFDIR;
        if stat.st_gid == from {
            if !is_dir && stat.st_nlink > 1 {
                done.linked += 1;
            } else if chgrp(&node, to).is_ok() {
                done.changed += 1;
            } else {
                done.failed += 1;
                done.complete = false;
            }
        }
        if !is_dir || visited.contains(&(stat.st_dev, stat.st_ino)) {
            continue;
        }
        // past the cap a folder is no longer remembered: the walk goes on,
        // bounded by MAX_ENTRIES (a member who made a million folders does
        // not keep the regroup pending for ever)
        if visited.len() < MAX_FOLDERS {
            visited.insert((stat.st_dev, stat.st_ino));
        }
        if stack.len() >= MAX_DEPTH {
            done.too_deep += 1;
            continue;
        }
        // listed through a descriptor of its own, opened under the same
        // parent without following; if another folder took the name since,
        // it is not this one and is left to its own turn
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let sub = match openat(parent, name.as_c_str(), flags, Mode::empty()) {
            Ok(sub) => sub,
            // renamed away or replaced by a link since: not this folder
            Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR | nix::errno::Errno::ELOOP) => continue,
            Err(_) => {
                done.failed += 1;
                done.complete = false;
                continue;
            }
        };
        match fstat(&sub) {
            Ok(again) if (again.st_dev, again.st_ino) == (stat.st_dev, stat.st_ino) => {}
            _ => continue,
        }
        match Dir::from_fd(sub) {
            Ok(list) => stack.push(list.into_iter()),
            Err(_) => {
                done.failed += 1;
                done.complete = false;
            }
        }
    }
    Ok(done)
}

fn kind(stat: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT
}

/// A listing of the folder `dir` through a descriptor of its own.
fn listing(dir: BorrowedFd<'_>) -> std::io::Result<OwningIter> {
    let fd = openat(dir, ".", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())?;
    Ok(Dir::from_fd(fd)?.into_iter())
}

/// The entry's group, changed through its own descriptor (a link's own).
fn chgrp(entry: &OwnedFd, gid: u32) -> std::io::Result<()> {
    let flags = nix::libc::AT_EMPTY_PATH | nix::libc::AT_SYMLINK_NOFOLLOW;
    // SAFETY: a plain system call on a descriptor we own and an empty,
    // NUL-terminated path
    let rc = unsafe { nix::libc::fchownat(entry.as_raw_fd(), c"".as_ptr(), u32::MAX, gid, flags) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The share folder at `path` opened without following a link, if it exists.
pub fn open_share(path: &std::path::Path) -> std::io::Result<Option<File>> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match nix::fcntl::open(path, flags, Mode::empty()) {
        // SAFETY: the descriptor was just opened and is owned here alone
        Ok(fd) => Ok(Some(unsafe { File::from_raw_fd(fd.into_raw_fd()) })),
        Err(nix::errno::Errno::ENOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_share_takes_its_new_group_and_nothing_outside_it_does() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("not root: chgrp to another group needs root; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let share = dir.path().join("share");
        std::fs::create_dir_all(share.join("a/b")).unwrap();
        std::fs::write(share.join("a/b/notes.txt"), "x").unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "y").unwrap();
        let linked_outside = dir.path().join("linked.txt");
        std::fs::write(&linked_outside, "z").unwrap();
        std::os::unix::fs::symlink(&outside, share.join("a/link")).unwrap();
        std::fs::hard_link(&linked_outside, share.join("a/hard")).unwrap();
        let old = 4_000_123;
        for path in ["a", "a/b", "a/b/notes.txt"] {
            std::os::unix::fs::chown(share.join(path), None, Some(old)).unwrap();
        }
        for path in [&outside, &linked_outside] {
            std::os::unix::fs::chown(path, None, Some(old)).unwrap();
        }
        std::os::unix::fs::lchown(share.join("a/link"), None, Some(old)).unwrap();
        let file = open_share(&share).unwrap().unwrap();
        let done = regroup(&file, old, 30_001).unwrap();
        assert_eq!(done, Regrouped { changed: 4, linked: 1, too_deep: 0, failed: 0, complete: true });
        for path in ["a", "a/b", "a/b/notes.txt"] {
            assert_eq!(std::fs::metadata(share.join(path)).unwrap().gid(), 30_001, "{path}");
        }
        assert_eq!(std::fs::symlink_metadata(share.join("a/link")).unwrap().gid(), 30_001, "the link's own");
        assert_eq!(std::fs::metadata(&outside).unwrap().gid(), old, "a link's target is never changed");
        assert_eq!(std::fs::metadata(&linked_outside).unwrap().gid(), old, "nor a file with a name outside");
        let again = regroup(&file, old, 30_001).unwrap();
        assert_eq!((again.changed, again.complete), (0, true), "once is enough");
        set_root_group(&file, None).unwrap();
        assert_eq!(std::fs::metadata(&share).unwrap().gid(), 0, "no gid: root's group, never another lab's");
        assert!(open_share(&dir.path().join("none")).unwrap().is_none());
        std::os::unix::fs::symlink(&share, dir.path().join("to-share")).unwrap();
        assert!(open_share(&dir.path().join("to-share")).is_err(), "a link where the share should be is refused");
    }

    #[test]
    fn a_deep_tree_is_walked_to_the_limit_without_holding_its_listings() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().join("share");
        for _ in 0..(MAX_DEPTH + 5) {
            deep = deep.join("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let file = open_share(&dir.path().join("share")).unwrap().unwrap();
        let done = regroup(&file, 0, 30_002).unwrap();
        assert_eq!(done.changed as usize, MAX_DEPTH, "every folder to the limit");
        assert_eq!(done.too_deep, 1, "and the one past it said");
    }
}
