//! File operations made through the site (policy §13, api.md "Research
//! data"), each in a process of its own that runs as the person: the
//! server (root) starts `jpu-share __files REQUEST`, which drops to the
//! person's uid, gid and groups before it opens anything ([`helper`]), so
//! the kernel's own permissions decide what they may read and write, and
//! a mistake here cannot make root read a file for them. Every path is
//! opened beneath the place's folder with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): a link anywhere in the path,
//! planted or raced in by a job, fails the call instead of being
//! followed.
//!
//! The protocol: the request is one JSON argument; the helper's first
//! line on stdout is a JSON [`Reply`], and a file's bytes follow it. An
//! upload's bytes go in on stdin. [`client`] is the server's side.

pub mod client;
pub mod helper;

use serde::{Deserialize, Serialize};

/// The hidden subcommand's name (first argument of `jpu-share`).
pub const SUBCOMMAND: &str = "__files";

/// Who the operation runs as (root's server drops to it; `None` when the
/// server is not root and so runs everything as itself anyway).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// A folder's entries, or a file's bytes (from `start`, `len` of them
    /// at most; a range past the end is refused).
    Get {
        range: Option<ByteRange>,
    },
    /// Writes stdin to the path (through a new file renamed over it: a
    /// refused upload leaves nothing behind). Past `max` bytes the upload
    /// is `TOO_LARGE`; past `room` (plus what the file it replaces held)
    /// it is `QUOTA_EXCEEDED`.
    Put {
        max: u64,
        room: u64,
    },
    Mkdir,
    /// A file, a link, or an empty folder.
    Delete,
}

/// A `Range` header's one range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ByteRange {
    /// `bytes=a-b` (b inclusive) or `bytes=a-` (`None`).
    From(u64, Option<u64>),
    /// `bytes=-n`: the last n.
    Last(u64),
}

/// One request to the helper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The place's folder (trusted: the server built it from settings and
    /// a name it accepts).
    pub base: std::path::PathBuf,
    /// The path inside it, one component each (checked by [`segments`]).
    pub path: Vec<String>,
    pub who: Option<Identity>,
    #[serde(flatten)]
    pub op: Op,
}

/// One entry of a folder (`kind`: `file`, `dir` or `link`; anything
/// else a job left, a fifo or a socket, is listed as a `file`).
pub use app::model::datasets::FileEntry as Entry;

/// The helper's answer (its first line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Listing {
        entries: Vec<Entry>,
    },
    /// `len` bytes from `start` of a file of `size` follow.
    File {
        size: u64,
        start: u64,
        len: u64,
        modified: String,
    },
    /// An upload's size; what it takes on disk, and what the file it
    /// replaced took (as the quota counts: blocks).
    Written {
        bytes: u64,
        stored: u64,
        replaced: u64,
    },
    Made,
    /// What the deleted entry held.
    Deleted {
        bytes: u64,
    },
    Failed {
        code: Failure,
        message: String,
    },
}

/// Why an operation failed, as the API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Failure {
    NotFound,
    /// A link in the path, a bad name.
    Validation,
    Forbidden,
    /// Exists already; a folder not empty; a folder where a file goes.
    Conflict,
    TooLarge,
    QuotaExceeded,
    /// The range asked for lies outside the file.
    Range,
    Internal,
}

/// The components of a path given in a URL (`a/b/c`), or why it is
/// refused: `..`, `.`, an absolute path (an empty first component) and a
/// NUL byte are never taken; a trailing `/` is the folder itself.
pub fn segments(path: &str) -> Result<Vec<String>, &'static str> {
    if path.starts_with('/') {
        return Err("an absolute path is refused: paths are relative to the place");
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in path.split('/') {
        match part {
            "" => return Err("an empty path component (`//`) is refused"),
            "." | ".." => return Err("`.` and `..` are refused in a path"),
            p if p.contains('\0') => return Err("a NUL byte is refused in a path"),
            p if p.len() > 255 => return Err("a path component is longer than 255 bytes"),
            p => out.push(p.to_string()),
        }
    }
    if out.len() > 64 {
        return Err("a path deeper than 64 folders is refused");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_dots_absolute_or_empty_parts_are_refused() {
        assert_eq!(segments(""), Ok(vec![]));
        assert_eq!(segments("a/b.txt"), Ok(vec!["a".to_string(), "b.txt".to_string()]));
        assert_eq!(segments("dir/"), Ok(vec!["dir".to_string()]));
        for bad in ["/etc/passwd", "../x", "a/../../b", "a/./b", "a//b", "..", "a/\0"] {
            assert!(segments(bad).is_err(), "{bad:?} taken");
        }
        assert!(segments(&"x".repeat(256)).is_err());
        assert!(segments(&vec!["d"; 65].join("/")).is_err());
    }

    #[test]
    fn a_request_and_a_reply_cross_the_pipe_unchanged() {
        let req = Request {
            base: "/s/home/kim".into(),
            path: vec!["a".into()],
            who: Some(Identity { uid: 1, gid: 2, groups: vec![3] }),
            op: Op::Put { max: 10, room: 20 },
        };
        let text = serde_json::to_string(&req).unwrap();
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), req);
        let reply = Reply::Failed { code: Failure::TooLarge, message: "m".into() };
        assert_eq!(serde_json::from_str::<Reply>(&serde_json::to_string(&reply).unwrap()).unwrap(), reply);
    }
}
