//! `jpu-share __files REQUEST`: one file operation, as the person (see
//! the module above). It runs before the server's logging and runtime
//! exist (`main` hands it over first) and writes nothing but its reply
//! and a file's bytes.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{openat, openat2, renameat, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, Gid, Uid, UnlinkatFlags};

use super::{ByteRange, Entry, Failure, Identity, Op, Reply, Request};

type Outcome<T> = Result<T, (Failure, String)>;

/// The size asked for the pipes to the server.
const PIPE_BYTES: i32 = 1 << 20;

/// The most entries a listing answers with (a job can make millions in
/// one folder; the answer is held whole by the server).
const MAX_LISTED: usize = 100_000;

/// Runs the request in `args` (its one argument); the exit status is 0
/// when the reply is not a failure.
pub fn run(args: Vec<OsString>) -> i32 {
    let mut out = std::io::stdout().lock();
    let reply = match args.first().and_then(|a| a.to_str()).map(serde_json::from_str::<Request>) {
        Some(Ok(req)) => serve(&req, &mut out),
        _ => Err((Failure::Internal, "the file helper was given no request it understands".into())),
    };
    match reply {
        // a file's header and bytes are written already
        Ok(None) => 0,
        Ok(Some(reply)) => write_reply(&mut out, &reply).map_or(1, |_| 0),
        Err((code, message)) => {
            let _ = write_reply(&mut out, &Reply::Failed { code, message });
            1
        }
    }
}

fn write_reply(out: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

fn serve(req: &Request, out: &mut impl Write) -> Outcome<Option<Reply>> {
    // the place itself is opened first, as root: a dataset lies in root's
    // own store (0700), which the person may not pass, and the server
    // chose the place from who they are. Below it everything is opened
    // as the person.
    let base = nix::fcntl::open(
        &req.base,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| failure(e, "the place"))?;
    // pipes of 1 MiB, not 64 KiB: a GiB crosses in 16 times fewer
    // wake-ups of both ends (measured: 454 → … MB/s up, see the bench)
    for fd in [nix::libc::STDIN_FILENO, nix::libc::STDOUT_FILENO] {
        // SAFETY: the process's own standard descriptors, open for its life
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
    }
    become_person(req.who.as_ref())?;
    match &req.op {
        Op::Get { range } => get(&base, &req.path, *range, out),
        Op::Put { max, room } => put(&base, &req.path, *max, *room).map(Some),
        Op::Mkdir => {
            let (parent, name) = parent_of(&base, &req.path)?;
            mkdirat(&parent, name.as_str(), Mode::from_bits_truncate(0o777)).map_err(|e| failure(e, name))?;
            Ok(Some(Reply::Made))
        }
        Op::Delete => delete(&base, &req.path).map(Some),
    }
}

/// The person's uid, gid and groups, for good, before anything is opened
/// (root never opens a path of theirs); a root helper without a person
/// refuses to go on.
fn become_person(who: Option<&Identity>) -> Outcome<()> {
    let drop = || -> nix::Result<()> {
        if let Some(who) = who {
            if Uid::effective().is_root() {
                let groups: Vec<Gid> = who.groups.iter().map(|g| Gid::from_raw(*g)).collect();
                nix::unistd::setgroups(&groups)?;
                let gid = Gid::from_raw(who.gid);
                nix::unistd::setresgid(gid, gid, gid)?;
                let uid = Uid::from_raw(who.uid);
                nix::unistd::setresuid(uid, uid, uid)?;
            }
        }
        nix::sys::prctl::set_no_new_privs()
    };
    drop().map_err(|e| (Failure::Internal, format!("cannot take on the person's identity: {e}")))?;
    if Uid::effective().is_root() || Uid::current().is_root() {
        return Err((Failure::Internal, "refusing to touch a person's files as root".into()));
    }
    // what an upload or a new folder makes is the person's alone (a lab
    // share's default ACL gives its group what it should)
    nix::sys::stat::umask(Mode::from_bits_truncate(0o077));
    Ok(())
}

/// Opens `path` beneath `base`, following no link anywhere in it.
fn beneath(base: &OwnedFd, path: &[String], flags: OFlag) -> Outcome<OwnedFd> {
    let joined = if path.is_empty() { ".".to_string() } else { path.join("/") };
    let how = OpenHow::new()
        .flags(flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    match openat2(base, joined.as_str(), how) {
        Ok(fd) => Ok(fd),
        // a folder asked for where the path ends in a link says "not a
        // folder": what is there decides how it is refused
        Err(Errno::ENOTDIR) if ends_in_link(base, &joined) => Err(failure(Errno::ELOOP, &joined)),
        Err(e) => Err(failure(e, &joined)),
    }
}

fn ends_in_link(base: &OwnedFd, joined: &str) -> bool {
    let how = OpenHow::new()
        .flags(OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS);
    openat2(base, joined, how).ok().and_then(|fd| fstat(&fd).ok()).is_some_and(|s| kind(&s) == "link")
}

/// The folder holding the last component, and that component's name.
fn parent_of<'p>(base: &OwnedFd, path: &'p [String]) -> Outcome<(OwnedFd, &'p String)> {
    let Some((name, dirs)) = path.split_last() else {
        return Err((Failure::Validation, "the place itself cannot be changed; name something inside it".into()));
    };
    Ok((beneath(base, dirs, OFlag::O_RDONLY | OFlag::O_DIRECTORY)?, name))
}

fn get(base: &OwnedFd, path: &[String], range: Option<ByteRange>, out: &mut impl Write) -> Outcome<Option<Reply>> {
    // O_NONBLOCK: a fifo a job left is opened without waiting for a writer
    let fd = beneath(base, path, OFlag::O_RDONLY | OFlag::O_NONBLOCK)?;
    let stat = fstat(&fd).map_err(|e| failure(e, "the path"))?;
    match kind(&stat) {
        "dir" => Ok(Some(Reply::Listing { entries: list(fd)? })),
        _ if SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) != SFlag::S_IFREG => {
            Err((Failure::Validation, "neither a file nor a folder (a fifo, a socket?)".into()))
        }
        _ => {
            let size = stat.st_size.max(0) as u64;
            let (start, len) =
                span(range, size).ok_or((Failure::Range, format!("the range lies outside the file ({size} bytes)")))?;
            let reply = Reply::File { size, start, len, modified: modified(&stat) };
            write_reply(out, &reply).map_err(|e| (Failure::Internal, e.to_string()))?;
            let mut file = File::from(fd);
            std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(start))
                .map_err(|e| (Failure::Internal, e.to_string()))?;
            // a reader that went away is not the helper's failure
            let _ = std::io::copy(&mut file.take(len), out).and_then(|_| out.flush());
            Ok(None)
        }
    }
}

/// The bytes a range names in a file of `size`: (start, length).
pub fn span(range: Option<ByteRange>, size: u64) -> Option<(u64, u64)> {
    match range {
        None => Some((0, size)),
        Some(ByteRange::From(start, _)) if start >= size => None,
        Some(ByteRange::From(start, end)) => {
            let last = end.unwrap_or(u64::MAX).min(size - 1);
            (last >= start).then(|| (start, last - start + 1))
        }
        Some(ByteRange::Last(0)) => None,
        Some(ByteRange::Last(n)) => Some((size.saturating_sub(n), n.min(size))),
    }
}

fn list(fd: OwnedFd) -> Outcome<Vec<Entry>> {
    let mut dir = nix::dir::Dir::from_fd(fd).map_err(|e| failure(e, "the folder"))?;
    let dirfd = dir.as_fd().try_clone_to_owned().map_err(|e| (Failure::Internal, e.to_string()))?;
    let mut entries = Vec::new();
    for entry in dir.iter() {
        if entries.len() >= MAX_LISTED {
            return Err((
                Failure::Validation,
                format!("the folder holds more than {MAX_LISTED} entries: list it from a job, or split it"),
            ));
        }
        let entry = entry.map_err(|e| failure(e, "the folder"))?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        // gone since it was listed (a job renamed it): not listed
        let Ok(stat) = fstatat(&dirfd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) else { continue };
        entries.push(Entry {
            name: name.to_string_lossy().into_owned(),
            kind: kind(&stat).into(),
            size: stat.st_size.max(0) as u64,
            modified: modified(&stat),
        });
    }
    entries.sort_by(|a, b| (a.kind != "dir", &a.name).cmp(&(b.kind != "dir", &b.name)));
    Ok(entries)
}

fn put(base: &OwnedFd, path: &[String], max: u64, room: u64) -> Outcome<Reply> {
    let (parent, name) = parent_of(base, path)?;
    let replaced = match fstatat(&parent, name.as_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(s) if kind(&s) == "dir" => return Err((Failure::Conflict, format!("{name} is a folder"))),
        Ok(s) if kind(&s) == "file" => on_disk(&s),
        Ok(_) | Err(Errno::ENOENT) => 0,
        Err(e) => return Err(failure(e, name)),
    };
    let limit = max.min(room.saturating_add(replaced));
    let temp = format!(".jpu-upload-{:016x}", rand::random::<u64>());
    // nameless until it is whole (O_TMPFILE): an upload cut off, even by
    // SIGKILL, leaves nothing behind
    let unnamed =
        openat(&parent, ".", OFlag::O_TMPFILE | OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::from_bits_truncate(0o666));
    let (made, named) = match unnamed {
        Ok(fd) => (fd, false),
        // a filesystem without O_TMPFILE (some NFS): a new file of a name
        // nobody can guess
        Err(Errno::EOPNOTSUPP | Errno::EISDIR | Errno::EINVAL) => (
            openat(
                &parent,
                temp.as_str(),
                OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o666),
            )
            .map_err(|e| failure(e, name))?,
            true,
        ),
        Err(e) => return Err(failure(e, name)),
    };
    let mut file = File::from(made);
    let copied = copy_big(&mut Framed::new(std::io::stdin().lock()).take(limit.saturating_add(1)), &mut file);
    let abandon = |why: (Failure, String)| {
        if named {
            let _ = unlinkat(&parent, temp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        Err(why)
    };
    let bytes = match copied {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return abandon((Failure::Validation, "the upload was cut off before its end".into()))
        }
        Err(e) => return abandon(io_failure(&e, name)),
    };
    if bytes > limit {
        return abandon(if bytes > max {
            (Failure::TooLarge, format!("the upload is larger than {max} bytes (storage.max_upload_mb)"))
        } else {
            (Failure::QuotaExceeded, format!("the upload would take the place past its quota ({room} bytes left)"))
        });
    }
    if let Err(e) = file.sync_data() {
        return abandon(io_failure(&e, name));
    }
    if !named {
        let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        let linked = nix::unistd::linkat(
            nix::fcntl::AT_FDCWD,
            proc_path.as_str(),
            &parent,
            temp.as_str(),
            nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
        );
        if let Err(e) = linked {
            return Err(failure(e, name));
        }
    }
    if let Err(e) = renameat(&parent, temp.as_str(), &parent, name.as_str()) {
        return abandon(failure(e, name));
    }
    let stored = fstat(&file).map(|s| s.st_blocks.max(0) as u64 * 512).unwrap_or(bytes);
    Ok(Reply::Written { bytes, stored, replaced })
}

/// `std::io::copy` with a buffer of a pipe's size (its own is 8 KiB for a
/// reader it cannot splice from).
fn copy_big(from: &mut impl Read, to: &mut File) -> std::io::Result<u64> {
    let mut buf = vec![0u8; PIPE_BYTES as usize];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// The upload's bytes as the client sends them: frames of a u32 length
/// (little-endian) and that many bytes, a zero length at the end. The
/// end of the pipe before that mark is an upload cut off.
struct Framed<R> {
    inner: R,
    left: usize,
    ended: bool,
}

impl<R: Read> Framed<R> {
    fn new(inner: R) -> Self {
        Self { inner, left: 0, ended: false }
    }
}

impl<R: Read> Read for Framed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut len = [0u8; 4];
            self.inner.read_exact(&mut len)?;
            self.left = u32::from_le_bytes(len) as usize;
            if self.left == 0 {
                self.ended = true;
                return Ok(0);
            }
        }
        let want = self.left.min(buf.len());
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= n;
        Ok(n)
    }
}

fn delete(base: &OwnedFd, path: &[String]) -> Outcome<Reply> {
    let (parent, name) = parent_of(base, path)?;
    let stat =
        fstatat(&parent, name.as_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).map_err(|e| failure(e, name))?;
    let how = if kind(&stat) == "dir" { UnlinkatFlags::RemoveDir } else { UnlinkatFlags::NoRemoveDir };
    unlinkat(&parent, name.as_str(), how).map_err(|e| failure(e, name))?;
    Ok(Reply::Deleted { bytes: if kind(&stat) == "file" { on_disk(&stat) } else { 0 } })
}

/// What deleting or replacing a file frees, as the quota counts it: its
/// blocks on disk (a sparse file's size is not), and nothing while
/// another name keeps them.
fn on_disk(stat: &FileStat) -> u64 {
    if stat.st_nlink > 1 {
        0
    } else {
        stat.st_blocks.max(0) as u64 * 512
    }
}

fn kind(stat: &FileStat) -> &'static str {
    match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => "dir",
        SFlag::S_IFLNK => "link",
        _ => "file",
    }
}

fn modified(stat: &FileStat) -> String {
    crate::clock::rfc3339(stat.st_mtime.saturating_mul(1000) + stat.st_mtime_nsec / 1_000_000)
}

fn io_failure(e: &std::io::Error, what: &str) -> (Failure, String) {
    match e.raw_os_error() {
        Some(n) => failure(Errno::from_raw(n), what),
        None => (Failure::Internal, e.to_string()),
    }
}

/// The API's failure for an errno.
fn failure(e: Errno, what: &str) -> (Failure, String) {
    let code = match e {
        Errno::ELOOP => return (Failure::Validation, format!("{what}: a link in the path is refused")),
        Errno::EXDEV => return (Failure::Validation, format!("{what}: the path leaves the place")),
        Errno::ENOENT | Errno::ENOTDIR => return (Failure::NotFound, format!("{what}: no such file or folder")),
        Errno::ENOTEMPTY => return (Failure::Conflict, format!("{what}: the folder is not empty")),
        Errno::EACCES | Errno::EPERM | Errno::EROFS => Failure::Forbidden,
        Errno::EEXIST | Errno::EISDIR => Failure::Conflict,
        Errno::EDQUOT | Errno::ENOSPC => Failure::QuotaExceeded,
        Errno::EFBIG => Failure::TooLarge,
        Errno::ENAMETOOLONG | Errno::EINVAL | Errno::ENXIO => Failure::Validation,
        _ => Failure::Internal,
    };
    (code, format!("{what}: {}", e.desc()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_without_its_end_mark_is_cut_off() {
        let framed = |bytes: Vec<u8>| {
            let mut out = Vec::new();
            Framed::new(&bytes[..]).read_to_end(&mut out).map(|_| out)
        };
        let mut whole = 3u32.to_le_bytes().to_vec();
        whole.extend(b"abc");
        whole.extend(2u32.to_le_bytes());
        whole.extend(b"de");
        assert!(framed(whole.clone()).is_err(), "no end mark");
        whole.extend(0u32.to_le_bytes());
        assert_eq!(framed(whole.clone()).unwrap(), b"abcde");
        assert!(framed(whole[..5].to_vec()).is_err(), "cut inside a frame");
    }

    #[test]
    fn ranges_are_clipped_to_the_file_and_empty_ones_refused() {
        use ByteRange::*;
        assert_eq!(span(None, 10), Some((0, 10)));
        assert_eq!(span(Some(From(0, Some(0))), 10), Some((0, 1)));
        assert_eq!(span(Some(From(2, None)), 10), Some((2, 8)));
        assert_eq!(span(Some(From(2, Some(100))), 10), Some((2, 8)));
        assert_eq!(span(Some(From(9, Some(9))), 10), Some((9, 1)));
        assert_eq!(span(Some(From(10, None)), 10), None);
        assert_eq!(span(Some(From(5, Some(4))), 10), None);
        assert_eq!(span(Some(Last(3)), 10), Some((7, 3)));
        assert_eq!(span(Some(Last(30)), 10), Some((0, 10)));
        assert_eq!(span(Some(Last(0)), 10), None);
        assert_eq!(span(Some(From(0, None)), 0), None);
    }
}
