//! Datasets for jobs that do not run in our mount namespace (Slurm, #43).
//! A local job sees the datasets open to its lab bound over an empty
//! folder; a Slurm job runs on a node as its person's uid, with the groups
//! the node's own directory gives (a lab's platform gid is not among
//! them). So on disk: each fetched dataset's folder is root's, 0700, with
//! an access ACL naming the uids of the people of the labs it is open to
//! (r-x), or 0755 when it is open to every lab; the store above them is
//! passable, not listable (0711); and each lab has a view,
//! `datasets/.labs/LAB` (0700 plus its members' uids), of links named as
//! the datasets open to it. `$JPU_DATASETS` of a Slurm job is its lab's
//! view. Who may read is recomputed from the database at start-up, after
//! every change to a dataset and every minute (people join and leave
//! labs); a Slurm start adds its own person at once, so a new member's
//! first job finds its lab's datasets.

use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Who may read a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readers {
    Everyone,
    /// These uids (and root).
    Uids(Vec<u32>),
}

const ACCESS: &std::ffi::CStr = c"system.posix_acl_access";
const USER_OBJ: u16 = 0x01;
const USER: u16 = 0x02;
const GROUP_OBJ: u16 = 0x04;
const MASK: u16 = 0x10;
const OTHER: u16 = 0x20;
const UNDEFINED: u32 = u32::MAX;

/// The POSIX ACL extended attribute (version 2) for `uids` reading.
fn acl(uids: &[u32]) -> Vec<u8> {
    let mut uids = uids.to_vec();
    uids.sort_unstable();
    uids.dedup();
    let mut entries = vec![(USER_OBJ, 7u16, UNDEFINED)];
    entries.extend(uids.iter().map(|u| (USER, 5, *u)));
    entries.extend([(GROUP_OBJ, 0, UNDEFINED), (MASK, 5, UNDEFINED), (OTHER, 0, UNDEFINED)]);
    let mut out = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in entries {
        out.extend(tag.to_le_bytes());
        out.extend(perm.to_le_bytes());
        out.extend(id.to_le_bytes());
    }
    out
}

/// The uids an access ACL names (entries of tag USER).
fn acl_uids(value: &[u8]) -> Vec<u32> {
    value
        .get(4..)
        .unwrap_or_default()
        .chunks_exact(8)
        .filter(|e| u16::from_le_bytes([e[0], e[1]]) == USER)
        .map(|e| u32::from_le_bytes([e[4], e[5], e[6], e[7]]))
        .collect()
}

fn open_dir(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW).open(path)
}

fn check(rc: i32) -> std::io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives the folder (root's) to exactly `readers`. Where the ACL cannot
/// be written (no ACL support; more readers than the file system keeps,
/// ~500 on ext4) it is left root's alone, with no ACL at all: a list
/// left behind would come back with the next change of the mask.
pub fn restrict(folder: &Path, readers: &Readers) -> std::io::Result<()> {
    let dir = open_dir(folder)?;
    let meta = dir.metadata()?;
    if (meta.uid(), meta.gid()) != (0, 0) {
        std::os::unix::fs::fchown(&dir, Some(0), Some(0))?;
    }
    let fd = dir.as_raw_fd();
    let closed = |dir: &std::fs::File| {
        dir.set_permissions(std::fs::Permissions::from_mode(0o700))?;
        // SAFETY: a plain system call on a descriptor we own
        let _ = unsafe { nix::libc::fremovexattr(fd, ACCESS.as_ptr()) };
        Ok::<(), std::io::Error>(())
    };
    match readers {
        Readers::Everyone => {
            // SAFETY: as above
            let _ = unsafe { nix::libc::fremovexattr(fd, ACCESS.as_ptr()) };
            dir.set_permissions(std::fs::Permissions::from_mode(0o755))
        }
        Readers::Uids(uids) if uids.is_empty() => closed(&dir),
        Readers::Uids(uids) => {
            let value = acl(uids);
            if current_acl(&dir).as_deref() == Some(value.as_slice()) {
                // already so: no write, so no reader ever sees it change
                return Ok(());
            }
            // the ACL sets the mode with it (0750: the mask is the group
            // class), in one step: never more open than asked meanwhile
            // SAFETY: a descriptor we own and a buffer of the length given
            let set =
                check(unsafe { nix::libc::fsetxattr(fd, ACCESS.as_ptr(), value.as_ptr().cast(), value.len(), 0) });
            if let Err(e) = set {
                closed(&dir)?;
                return Err(e);
            }
            Ok(())
        }
    }
}

/// The folder's access ACL as it is on disk, if it has one.
fn current_acl(dir: &std::fs::File) -> Option<Vec<u8>> {
    let mut value = vec![0u8; 64 * 1024];
    // SAFETY: a descriptor we own and a buffer of the length given
    let n = unsafe { nix::libc::fgetxattr(dir.as_raw_fd(), ACCESS.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
    (n > 0).then(|| {
        value.truncate(n as usize);
        value
    })
}

/// Adds `uid` to the folder's readers (a start, before the next full
/// recompute): the list on disk is the last recompute's, whole (a list
/// that could not be written is removed, never left), plus this person.
/// A folder open to everyone stays so.
pub fn admit(folder: &Path, uid: u32) -> std::io::Result<()> {
    let dir = open_dir(folder)?;
    if dir.metadata()?.permissions().mode() & 0o005 == 0o005 {
        return Ok(());
    }
    let mut uids = current_acl(&dir).map(|v| acl_uids(&v)).unwrap_or_default();
    if uids.contains(&uid) {
        return Ok(());
    }
    uids.push(uid);
    restrict(folder, &Readers::Uids(uids))
}

/// A lab's view: `view` (made if missing) holds a link per dataset open
/// to the lab, named as the dataset, to its folder, and nothing else;
/// `readers` replaces who may read it (None: as it is).
pub fn sync_view(view: &Path, open: &[(String, PathBuf)], readers: Option<&Readers>) -> std::io::Result<()> {
    let parent = view.parent().ok_or_else(|| std::io::Error::other("a view has a parent"))?;
    std::fs::DirBuilder::new().recursive(true).mode(0o711).create(parent)?;
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711))?;
    match std::fs::DirBuilder::new().mode(0o700).create(view) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    if let Some(readers) = readers {
        restrict(view, readers)?;
    }
    let dir = open_dir(view)?;
    let wanted: std::collections::HashMap<&str, &Path> =
        open.iter().map(|(name, folder)| (name.as_str(), folder.as_path())).collect();
    for entry in std::fs::read_dir(view)? {
        let name = entry?.file_name();
        let keep = name
            .to_str()
            .and_then(|n| wanted.get(n))
            .is_some_and(|target| std::fs::read_link(view.join(&name)).is_ok_and(|current| current == *target));
        if !keep {
            nix::unistd::unlinkat(&dir, name.as_os_str(), nix::unistd::UnlinkatFlags::NoRemoveDir)
                .or_else(|_| nix::unistd::unlinkat(&dir, name.as_os_str(), nix::unistd::UnlinkatFlags::RemoveDir))?;
        }
    }
    for (name, folder) in open {
        if name.is_empty() || name.starts_with('.') || name.contains('/') {
            continue;
        }
        match nix::unistd::symlinkat(folder.as_path(), &dir, name.as_str()) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_acl_names_each_reader_once_in_order() {
        let value = acl(&[3902, 3901, 3902]);
        assert_eq!(acl_uids(&value), vec![3901, 3902]);
        // header + 3 fixed + 2 users + mask = 6 entries of 8 bytes
        assert_eq!(value.len(), 4 + 6 * 8);
        assert_eq!(&value[..4], &2u32.to_le_bytes());
    }

    /// The kernel keeps to it: one uid reads, another does not (root only).
    #[test]
    fn only_the_named_uids_read_a_restricted_folder() {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let folder = base.path().join("set");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("data.txt"), "pixels").unwrap();
        std::fs::set_permissions(folder.join("data.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let reads = |uid: u32| {
            use std::os::unix::process::CommandExt;
            std::process::Command::new("cat")
                .arg(folder.join("data.txt"))
                .uid(uid)
                .gid(uid)
                .output()
                .unwrap()
                .status
                .success()
        };
        restrict(&folder, &Readers::Uids(vec![3_103_001])).unwrap();
        assert!(reads(3_103_001) && !reads(3_103_002));
        admit(&folder, 3_103_002).unwrap();
        assert!(reads(3_103_001) && reads(3_103_002));
        restrict(&folder, &Readers::Uids(vec![])).unwrap();
        assert!(!reads(3_103_001));
        restrict(&folder, &Readers::Everyone).unwrap();
        assert!(reads(3_103_002));
        // more readers than the file system keeps: closed, no list left
        // behind for a later start to bring back
        restrict(&folder, &Readers::Uids(vec![3_103_001])).unwrap();
        let crowd: Vec<u32> = (3_200_000..3_210_000).collect();
        assert!(restrict(&folder, &Readers::Uids(crowd)).is_err());
        assert!(!reads(3_103_001));
        admit(&folder, 3_103_002).unwrap();
        assert!(reads(3_103_002) && !reads(3_103_001), "only the one admitted");
    }
}
