//! Unpacking a fetched archive into a dataset's folder (policy §13): an
//! archive from a URL is hostile. Each entry's name is taken apart into
//! plain components — an absolute name, `..` or a component that is not
//! valid is skipped — and only plain files and folders are made; a
//! symbolic or hard link, a device or a fifo is skipped. Every skip is
//! named in the fetch log. What is made is root's, 0644 or 0755 whatever
//! the archive says (no setuid bit, no owner from the archive), inside a
//! fresh folder only root writes to, so nothing can race the unpacking.
//! The unpacked total is capped like the download (a small archive that
//! inflates without end stops at `storage.max_dataset_gb`).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// The most entries an archive may have.
const MAX_ENTRIES: usize = 1_000_000;

/// The hidden subcommand that unpacks in a process of its own.
pub const SUBCOMMAND: &str = "__unpack";
/// The memory an unpacking may take: a tar's long-name and PAX headers
/// are read whole by the tar crate, and a small archive can claim
/// gigabytes of them (the server would die with it, and again at each
/// start as the fetch resumed). Past this the unpacking process alone
/// ends.
const MEMORY_LIMIT: u64 = 2 << 30;
/// The most skipped entries named one by one in the fetch log.
const MAX_SKIPS_NAMED: usize = 1000;

/// What kind of file a download is, from its URL's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    Tar,
    TarGz,
    Zip,
    /// Kept as the one file it is.
    Plain,
}

impl Kind {
    pub fn of(url_path: &str) -> Self {
        let lower = url_path.to_ascii_lowercase();
        if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            Kind::TarGz
        } else if lower.ends_with(".tar") {
            Kind::Tar
        } else if lower.ends_with(".zip") {
            Kind::Zip
        } else {
            Kind::Plain
        }
    }
}

/// What unpacking did.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Unpacked {
    pub bytes: u64,
    pub files: u64,
    /// One line per entry skipped, and why.
    pub skipped: Vec<String>,
    /// Skips past the ones named.
    pub more_skipped: u64,
}

impl Unpacked {
    fn skip(&mut self, line: String) {
        if self.skipped.len() < MAX_SKIPS_NAMED {
            self.skipped.push(line);
        } else {
            self.more_skipped += 1;
        }
    }

    /// The fetch log's text.
    pub fn log(&self) -> String {
        let mut log = format!("{} files, {} bytes unpacked\n", self.files, self.bytes);
        for line in &self.skipped {
            log.push_str(line);
            log.push('\n');
        }
        if self.more_skipped > 0 {
            log.push_str(&format!("…and {} more entries skipped\n", self.more_skipped));
        }
        log
    }
}

/// Unpacks in a process of its own (this binary's [`SUBCOMMAND`]) under
/// [`MEMORY_LIMIT`].
pub async fn in_a_process(kind: Kind, archive: &Path, out: &Path, max: u64) -> Result<Unpacked, String> {
    let helper = crate::executor::enter::helper().ok_or("the jpu-share binary is not found")?;
    let request = serde_json::json!({"kind": kind, "archive": archive, "out": out, "max": max}).to_string();
    let done = tokio::process::Command::new(helper)
        .arg(SUBCOMMAND)
        .arg(request)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| format!("cannot start the unpacking: {e}"))?;
    let text = String::from_utf8_lossy(&done.stdout);
    match serde_json::from_str::<Result<Unpacked, String>>(text.trim()) {
        Ok(answer) => answer,
        Err(_) => Err(format!(
            "the unpacking ended without an answer ({}): a damaged archive, or one that needs more than {} GiB of memory to read",
            done.status,
            MEMORY_LIMIT >> 30
        )),
    }
}

/// [`SUBCOMMAND`]: its one argument says what to unpack; the answer is a
/// JSON line.
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    #[derive(serde::Deserialize)]
    struct Job {
        kind: Kind,
        archive: PathBuf,
        out: PathBuf,
        max: u64,
    }
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_AS, MEMORY_LIMIT, MEMORY_LIMIT);
    let answer = match args.first().and_then(|a| a.to_str()).map(serde_json::from_str::<Job>) {
        Some(Ok(job)) => unpack(job.kind, &job.archive, &job.out, job.max),
        _ => Err("the unpacking was given nothing it understands".into()),
    };
    println!("{}", serde_json::to_string(&answer).unwrap_or_default());
    i32::from(answer.is_err())
}

/// Unpacks `archive` into `out` (which exists, empty), at most `max`
/// bytes in all.
pub fn unpack(kind: Kind, archive: &Path, out: &Path, max: u64) -> Result<Unpacked, String> {
    let mut done = Unpacked::default();
    let file = File::open(archive).map_err(|e| format!("cannot open the download: {e}"))?;
    match kind {
        Kind::Plain => return Err("not an archive".into()),
        Kind::Tar => tar_entries(tar::Archive::new(file), out, max, &mut done)?,
        Kind::TarGz => tar_entries(tar::Archive::new(flate2::read::GzDecoder::new(file)), out, max, &mut done)?,
        Kind::Zip => zip_entries(file, out, max, &mut done)?,
    }
    Ok(done)
}

fn tar_entries<R: Read>(mut archive: tar::Archive<R>, out: &Path, max: u64, done: &mut Unpacked) -> Result<(), String> {
    let entries = archive.entries().map_err(|e| format!("not a tar archive: {e}"))?;
    for (i, entry) in entries.enumerate() {
        if i >= MAX_ENTRIES {
            return Err(format!("the archive has more than {MAX_ENTRIES} entries"));
        }
        let mut entry = entry.map_err(|e| format!("the archive is damaged: {e}"))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        let is_dir = kind.is_dir();
        if !(kind.is_file() || is_dir) {
            done.skip(format!("{name}: skipped, a {} is not unpacked", describe(kind)));
            continue;
        }
        place(&name, is_dir, &mut entry, out, max, done)?;
    }
    Ok(())
}

fn describe(kind: tar::EntryType) -> &'static str {
    match kind {
        tar::EntryType::Symlink => "symbolic link",
        tar::EntryType::Link => "hard link",
        tar::EntryType::Char | tar::EntryType::Block => "device",
        tar::EntryType::Fifo => "fifo",
        _ => "special entry",
    }
}

fn zip_entries(file: File, out: &Path, max: u64, done: &mut Unpacked) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("not a zip archive: {e}"))?;
    if archive.len() > MAX_ENTRIES {
        return Err(format!("the archive has more than {MAX_ENTRIES} entries"));
    }
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| format!("the archive is damaged: {e}"))?;
        let name = entry.name().to_string();
        if entry.is_symlink() {
            done.skip(format!("{name}: skipped, a symbolic link is not unpacked"));
            continue;
        }
        let is_dir = entry.is_dir();
        place(&name, is_dir, &mut entry, out, max, done)?;
    }
    Ok(())
}

/// One entry, where its name says inside `out`, or a skip.
fn place(
    name: &str,
    is_dir: bool,
    data: &mut impl Read,
    out: &Path,
    max: u64,
    done: &mut Unpacked,
) -> Result<(), String> {
    let Some(relative) = inside(name) else {
        done.skip(format!("{name}: skipped, it would land outside the dataset's folder"));
        return Ok(());
    };
    let target = out.join(&relative);
    let parent = if is_dir { target.as_path() } else { target.parent().unwrap_or(out) };
    DirBuilder::new().recursive(true).mode(0o755).create(parent).map_err(|e| format!("{name}: {e}"))?;
    if is_dir {
        return Ok(());
    }
    // create_new: a second entry of the same name does not write through
    // what the first made
    let mut file = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&target)
    {
        Ok(f) => f,
        Err(e) => {
            done.skip(format!("{name}: skipped ({e})"));
            return Ok(());
        }
    };
    let room = max.saturating_sub(done.bytes);
    let copied =
        std::io::copy(&mut data.take(room.saturating_add(1)), &mut file).map_err(|e| format!("{name}: {e}"))?;
    if copied > room {
        return Err(format!("unpacked, the data is larger than {max} bytes (storage.max_dataset_gb)"));
    }
    file.flush().map_err(|e| format!("{name}: {e}"))?;
    done.bytes += copied;
    done.files += 1;
    Ok(())
}

/// An entry's name as plain components below the folder, or `None` when
/// it is absolute, climbs (`..`) or names nothing.
fn inside(name: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in Path::new(name).components() {
        match part {
            Component::Normal(p) if !p.is_empty() => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_climb_or_are_absolute_are_not_inside() {
        assert_eq!(inside("a/b.txt"), Some(PathBuf::from("a/b.txt")));
        assert_eq!(inside("./a/"), Some(PathBuf::from("a")));
        for bad in ["../x", "a/../../x", "/etc/passwd", "", ".", "a/.."] {
            assert_eq!(inside(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn kinds_come_from_the_url_path() {
        assert_eq!(Kind::of("/d/set.TAR.GZ"), Kind::TarGz);
        assert_eq!(Kind::of("/d/set.tgz"), Kind::TarGz);
        assert_eq!(Kind::of("/d/set.tar"), Kind::Tar);
        assert_eq!(Kind::of("/d/set.zip"), Kind::Zip);
        assert_eq!(Kind::of("/d/weights.bin"), Kind::Plain);
    }

    /// A tar with a good file, a climbing name, an absolute name, a
    /// symbolic link and a hard link: only the good file is made.
    #[test]
    fn a_hostile_tar_leaves_nothing_outside_and_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let mut builder = tar::Builder::new(Vec::new());
        let mut add = |name: &[u8], kind: tar::EntryType, data: &[u8], link: Option<&str>| {
            let mut h = tar::Header::new_old();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_entry_type(kind);
            h.set_size(data.len() as u64);
            h.set_mode(0o4777);
            if let Some(l) = link {
                h.set_link_name(l).unwrap();
            }
            h.set_cksum();
            builder.append(&h, data).unwrap();
        };
        add(b"good/data.txt", tar::EntryType::Regular, b"hello", None);
        add(b"../escaped.txt", tar::EntryType::Regular, b"x", None);
        add(b"/tmp/absolute.txt", tar::EntryType::Regular, b"x", None);
        add(b"good/link", tar::EntryType::Symlink, b"", Some("/etc/shadow"));
        add(b"good/hard", tar::EntryType::Link, b"", Some("/etc/shadow"));
        let archive = dir.path().join("a.tar");
        std::fs::write(&archive, builder.into_inner().unwrap()).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let done = unpack(Kind::Tar, &archive, &out, 1 << 20).unwrap();
        assert_eq!(std::fs::read(out.join("good/data.txt")).unwrap(), b"hello");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(out.join("good/data.txt")).unwrap().permissions(),
        );
        assert_eq!(mode & 0o7777, 0o644, "no setuid bit, no write for others");
        assert!(!dir.path().join("escaped.txt").exists());
        assert!(!out.join("good/link").exists() && std::fs::symlink_metadata(out.join("good/link")).is_err());
        assert!(std::fs::symlink_metadata(out.join("good/hard")).is_err());
        assert_eq!(done.files, 1);
        assert_eq!(done.skipped.len(), 4, "{:?}", done.skipped);
    }

    #[test]
    fn an_archive_that_inflates_past_the_cap_fails() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.tar.gz");
        let gz = flate2::write::GzEncoder::new(File::create(&archive).unwrap(), flate2::Compression::best());
        let mut builder = tar::Builder::new(gz);
        let data = vec![0u8; 1 << 20];
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append_data(&mut h, "zeros.bin", &data[..]).unwrap();
        builder.into_inner().unwrap().finish().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let e = unpack(Kind::TarGz, &archive, &out, 1000).unwrap_err();
        assert!(e.contains("larger than 1000"), "{e}");
        assert_eq!(unpack(Kind::TarGz, &archive, &dir.path().join("out2"), 2 << 20).unwrap().bytes, 1 << 20);
    }
}
