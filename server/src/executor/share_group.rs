//! A lab share moving to another gid (policy §13: the lab's group in the
//! directory replaces the one the platform handed out; a lab moved off a
//! gid the directory gives another lab): the share and what members made
//! in it under the old gid take the new one, so nobody loses their lab's
//! files and the old gid's new holders find nothing of this lab's.
//!
//! The share is members' ground: any entry may be a planted link, a deep
//! tree or renamed while the walk runs. So every entry is opened relative
//! to its folder's descriptor without following a link (`O_PATH |
//! O_NOFOLLOW`), checked and changed through that descriptor (a link's
//! own group, never its target's), and the walk stops at [`MAX_DEPTH`].

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, Mode, SFlag};

/// Folders deeper than this keep their old group (a job may plant a tree
/// deeper than any walk should follow); the warning says so.
const MAX_DEPTH: usize = 64;

/// What a regroup changed and left.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Regrouped {
    pub changed: u64,
    pub too_deep: u64,
}

/// Gives the share `share` (opened without following a link) the group
/// `to`, and every entry in it that has its old group the new one.
pub fn regroup_share(share: &File, to: u32) -> std::io::Result<Regrouped> {
    let from = share.metadata()?.gid();
    let mut done = Regrouped::default();
    if from == to {
        return Ok(done);
    }
    std::os::unix::fs::fchown(share, None, Some(to))?;
    // the share's own group was root's when it had no gid: nothing in it
    // is the old group's then
    if from != 0 {
        walk(share.as_fd(), from, to, 0, &mut done)?;
    }
    Ok(done)
}

fn walk(
    dir: std::os::fd::BorrowedFd<'_>,
    from: u32,
    to: u32,
    depth: usize,
    done: &mut Regrouped,
) -> std::io::Result<()> {
    // a second descriptor to list with; the first stays the base of openat
    let listing = openat(dir, ".", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())?;
    let mut entries = nix::dir::Dir::from_fd(listing)?;
    let names: Vec<std::ffi::CString> = entries
        .iter()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.as_bytes() != b"." && n.as_bytes() != b"..")
        .collect();
    for name in names {
        // gone or renamed since the listing: nothing to do for it here
        let Ok(entry) =
            openat(dir, name.as_c_str(), OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC, Mode::empty())
        else {
            continue;
        };
        let Ok(stat) = fstat(&entry) else { continue };
        if stat.st_gid == from {
            chgrp(&entry, to)?;
            done.changed += 1;
        }
        if SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT != SFlag::S_IFDIR {
            continue;
        }
        if depth + 1 >= MAX_DEPTH {
            done.too_deep += 1;
            continue;
        }
        // reopened to be listed, by name under the same parent and without
        // following: if a link took its place since, it is refused
        let Ok(sub) = openat(
            dir,
            name.as_c_str(),
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        walk(sub.as_fd(), from, to, depth + 1, done)?;
    }
    Ok(())
}

/// The entry's group, changed through its own descriptor (a link's own).
fn chgrp(entry: &OwnedFd, gid: u32) -> std::io::Result<()> {
    // SAFETY: a plain system call on a descriptor we own and an empty,
    // NUL-terminated path
    let rc = unsafe {
        nix::libc::fchownat(
            entry.as_raw_fd(),
            c"".as_ptr(),
            u32::MAX,
            gid,
            nix::libc::AT_EMPTY_PATH | nix::libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The share folder at `path` opened without following a link, if it exists.
pub fn open_share(path: &std::path::Path) -> std::io::Result<Option<File>> {
    let fd = match nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    // SAFETY: the descriptor was just opened and is owned here alone
    Ok(Some(unsafe { File::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(fd)) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_takes_its_new_group_and_a_planted_link_keeps_its_target_untouched() {
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
        std::os::unix::fs::symlink(&outside, share.join("a/link")).unwrap();
        let old = 4_000_123;
        for path in ["", "a", "a/b", "a/b/notes.txt"] {
            std::os::unix::fs::chown(share.join(path), None, Some(old)).unwrap();
        }
        std::os::unix::fs::chown(&outside, None, Some(old)).unwrap();
        std::os::unix::fs::lchown(share.join("a/link"), None, Some(old)).unwrap();
        let file = open_share(&share).unwrap().unwrap();
        let done = regroup_share(&file, 30_001).unwrap();
        assert_eq!(done, Regrouped { changed: 4, too_deep: 0 });
        for path in ["", "a", "a/b", "a/b/notes.txt"] {
            assert_eq!(std::fs::metadata(share.join(path)).unwrap().gid(), 30_001, "{path}");
        }
        assert_eq!(std::fs::symlink_metadata(share.join("a/link")).unwrap().gid(), 30_001, "the link's own");
        assert_eq!(std::fs::metadata(&outside).unwrap().gid(), old, "a link's target is never changed");
        assert_eq!(regroup_share(&file, 30_001).unwrap(), Regrouped::default(), "once is enough");
        assert!(open_share(&dir.path().join("none")).unwrap().is_none());
        std::os::unix::fs::symlink(&share, dir.path().join("to-share")).unwrap();
        assert!(open_share(&dir.path().join("to-share")).is_err(), "a link where the share should be is refused");
    }
}
