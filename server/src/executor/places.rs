//! Homes, lab shares and datasets on disk (policy §13): `<root>/home/USER`
//! (the person's uid and gid, 0700), `<root>/labs/LAB` (root and the lab's
//! gid, setgid 2770: what members write stays the lab's), and
//! `<root>/datasets` (read-only to jobs). Jobs keep `umask 077` (a loose
//! one would open their files to everyone sharing their primary group,
//! in /tmp and elsewhere); the share's default ACL gives its group what
//! members make there instead, and its sticky bit keeps members from
//! deleting or renaming each other's files. Made at first use, as root, by
//! the executor that starts a job there. The folders above them are root's
//! (0711: passable, not listable), so nobody but root changes which folder
//! a name is; each place is still opened without following a link and
//! changed through its descriptor.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The fetched datasets' folder, in `datasets`.
const STORE: &str = ".store";

/// Where the places are.
#[derive(Debug, Clone, PartialEq)]
pub struct Places {
    root: PathBuf,
}

/// A job's places, as its start request carries them.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPlaces {
    pub home: PathBuf,
    pub lab_dir: PathBuf,
    pub datasets: PathBuf,
    /// The lab's view of its datasets (`datasets/.labs/LAB`: links), the
    /// `$JPU_DATASETS` of jobs outside our mount namespace (Slurm).
    pub lab_view: PathBuf,
    /// The lab's gid: the share's group, which the job carries.
    pub lab_gid: Option<u32>,
    /// The datasets open to the job's lab: (name, folder), bound
    /// read-only at `datasets/NAME` in the job's own mount namespace.
    pub open: Vec<(String, PathBuf)>,
}

impl Places {
    /// `root` made absolute: jobs see absolute paths.
    pub fn new(root: &Path) -> Self {
        Self { root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A person's home, a lab's share; `None` for a name that is no single
    /// path component (never the case for names the platform accepts).
    pub fn home(&self, user: &str) -> Option<PathBuf> {
        component(user).map(|u| self.root.join("home").join(u))
    }

    pub fn lab(&self, lab: &str) -> Option<PathBuf> {
        component(lab).map(|l| self.root.join("labs").join(l))
    }

    pub fn datasets(&self) -> PathBuf {
        self.root.join("datasets")
    }

    /// Where fetched datasets are kept: passable, not listable (0711), each
    /// folder readable only by the people of the labs it is open to
    /// ([`super::dataset_access`]); a local job sees those open to its lab
    /// bound from here, the files API opens one as root and reads it as
    /// the person below that.
    pub fn dataset_store(&self) -> PathBuf {
        self.datasets().join(STORE)
    }

    /// A lab's view of its datasets (links), for Slurm jobs.
    pub fn lab_view(&self, lab: &str) -> Option<PathBuf> {
        component(lab).map(|l| self.datasets().join(".labs").join(l))
    }

    /// The places of a job of `user` in `lab`.
    pub fn of_job(&self, user: &str, lab: &str, lab_gid: Option<u32>) -> Option<JobPlaces> {
        Some(JobPlaces {
            home: self.home(user)?,
            lab_dir: self.lab(lab)?,
            datasets: self.datasets(),
            lab_view: self.lab_view(lab)?,
            lab_gid,
            open: Vec::new(),
        })
    }
}

fn component(name: &str) -> Option<&str> {
    (!name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])).then_some(name)
}

impl JobPlaces {
    /// Where fetched datasets are kept (as [`Places::dataset_store`]).
    pub fn dataset_store(&self) -> PathBuf {
        self.datasets.join(STORE)
    }

    /// Makes the job's places where they are missing and sets their owner
    /// and mode: `owner` is the job's uid and gid when the server is root
    /// (else nothing is chowned: the server's own user runs the job).
    pub fn prepare(&self, owner: Option<(u32, u32)>) -> std::io::Result<()> {
        let top = self.home.parent().and_then(Path::parent).ok_or_else(|| std::io::Error::other("no storage root"))?;
        for dir in [top.to_path_buf(), top.join("home"), top.join("labs"), self.datasets.clone()] {
            std::fs::DirBuilder::new().recursive(true).mode(0o711).create(&dir)?;
            if owner.is_some() {
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))?;
            }
        }
        let home = place(&self.home, 0o700)?;
        let lab = place(&self.lab_dir, 0o770)?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::fchown(&home, Some(uid), Some(gid))?;
            home.set_permissions(std::fs::Permissions::from_mode(0o700))?;
            // the lab's gid now (root's group without one, never a gid
            // another lab may hold); files of an old gid are regrouped in
            // the background (`services::storage::regroups`), never here
            super::share_group::set_root_group(&lab, self.lab_gid)?;
            // setgid: files made in it are the lab's group's; sticky: each
            // member's files are theirs to delete or rename
            let mode = if self.lab_gid.is_some() { 0o3770 } else { 0o1770 };
            lab.set_permissions(std::fs::Permissions::from_mode(mode))?;
            if let Err(e) = group_by_default(&lab) {
                tracing::warn!(error = %e, share = %self.lab_dir.display(),
                    "no default ACL on a lab share (the filesystem has no ACLs?): members' files stay their own");
            }
        }
        Ok(())
    }
}

impl Places {
    /// Gives the lab's share, where it exists, the group `gid` (root's
    /// when None, and then no setgid): quick, so that no share keeps a
    /// gid its lab gave up while its files are walked.
    pub fn set_share_group(&self, lab: &str, gid: Option<u32>) -> std::io::Result<()> {
        let Some(share) = self.open_share(lab)? else { return Ok(()) };
        super::share_group::set_root_group(&share, gid)?;
        let mode = if gid.is_some() { 0o3770 } else { 0o1770 };
        share.set_permissions(std::fs::Permissions::from_mode(mode))
    }

    /// Gives what members made in the lab's share under the gid `from`
    /// the gid `to` (root's when None). None: there is no share.
    pub fn regroup_share(
        &self,
        lab: &str,
        from: u32,
        to: Option<u32>,
    ) -> std::io::Result<Option<super::share_group::Regrouped>> {
        let Some(share) = self.open_share(lab)? else { return Ok(None) };
        super::share_group::regroup(&share, from, to.unwrap_or(0)).map(Some)
    }

    fn open_share(&self, lab: &str) -> std::io::Result<Option<std::fs::File>> {
        match self.lab(lab) {
            Some(path) => super::share_group::open_share(&path),
            None => Ok(None),
        }
    }
}

/// A default ACL of `u::rwx,g::rwx,o::---`: what is made in the folder is
/// its group's to read and write, whatever the maker's umask (the POSIX
/// ACL extended attribute, version 2: one tag, permission, id per entry).
fn group_by_default(dir: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const USER_OBJ: u16 = 0x01;
    const GROUP_OBJ: u16 = 0x04;
    const OTHER: u16 = 0x20;
    let mut value = 2u32.to_le_bytes().to_vec();
    for (tag, perm) in [(USER_OBJ, 7u16), (GROUP_OBJ, 7), (OTHER, 0)] {
        value.extend(tag.to_le_bytes());
        value.extend(perm.to_le_bytes());
        value.extend(u32::MAX.to_le_bytes());
    }
    let name = c"system.posix_acl_default";
    // SAFETY: a plain system call on a descriptor we own, with a buffer of
    // the length given
    let rc = unsafe { nix::libc::fsetxattr(dir.as_raw_fd(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The folder at `path`, made if missing, opened without following a link
/// (a link there is refused, never followed).
fn place(path: &Path, mode: u32) -> std::io::Result<std::fs::File> {
    match std::fs::DirBuilder::new().mode(mode).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    std::fs::OpenOptions::new().read(true).custom_flags(nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_components() {
        let places = Places::new(Path::new("/srv/jpu"));
        assert_eq!(places.home("kim"), Some(PathBuf::from("/srv/jpu/home/kim")));
        assert_eq!(places.lab("vision"), Some(PathBuf::from("/srv/jpu/labs/vision")));
        for bad in ["", ".", "..", "a/b", "x\0"] {
            assert_eq!(places.home(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn places_are_made_once_and_a_link_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let places = Places::new(dir.path());
        let job = places.of_job("kim", "vision", None).unwrap();
        job.prepare(None).unwrap();
        assert!(job.home.is_dir() && job.lab_dir.is_dir() && job.datasets.is_dir());
        std::fs::write(job.home.join("notebook.ipynb"), "{}").unwrap();
        job.prepare(None).unwrap();
        assert!(job.home.join("notebook.ipynb").is_file(), "a home is kept");
        // a link where a place should be is refused
        let other = places.of_job("lee", "vision", None).unwrap();
        std::os::unix::fs::symlink("/etc", &other.home).unwrap();
        assert!(other.prepare(None).is_err());
    }
}
