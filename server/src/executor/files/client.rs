//! The server's side of a file operation: start the helper (by its
//! absolute path, with an empty environment: `posix_spawn`, never a fork
//! of the whole server), pass an upload's bytes to its stdin as they
//! arrive (never more than a pipe's worth held here), read its reply, and
//! hand a file's bytes on as a stream.

use std::path::Path;
use std::process::Stdio;

use futures_util::{Stream, StreamExt};
use hyper::body::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdout, Command};

use super::{Failure, Reply, Request, SUBCOMMAND};

/// The longest reply line read (100,000 entries of the longest names).
const MAX_REPLY: u64 = 64 << 20;

/// A file's bytes, as the helper sends them.
pub type Bytestream = tokio_util::io::ReaderStream<BufReader<ChildStdout>>;

/// Runs `req`; for an upload, `body` is what goes to the file. A file's
/// reply comes with its bytes.
pub async fn call<S, E>(helper: &Path, req: &Request, body: Option<S>) -> Result<(Reply, Option<Bytestream>), String>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let text = serde_json::to_string(req).map_err(|e| e.to_string())?;
    let mut child = Command::new(helper)
        .arg(SUBCOMMAND)
        .arg(text)
        .env_clear()
        .stdin(if body.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        // not killed when the request goes away: its stdin or stdout
        // closes, and it ends on its own (an upload cut off drops what it
        // had written)
        .spawn()
        .map_err(|e| format!("cannot start the file helper: {e}"))?;
    let mut out = BufReader::with_capacity(1 << 20, child.stdout.take().ok_or("the file helper has no stdout")?);
    if let (Some(mut body), Some(mut stdin)) = (body, child.stdin.take()) {
        // each chunk goes as a frame (its length, u32 LE, then its bytes),
        // and a zero length marks the end: an upload cut off (a client
        // gone, a broken connection) has none, and the helper then drops
        // what it had written
        let mut complete = true;
        while let Some(chunk) = body.next().await {
            let Ok(chunk) = chunk else {
                complete = false;
                break;
            };
            if chunk.is_empty() {
                continue;
            }
            let len = (chunk.len() as u32).to_le_bytes();
            // the helper stopped reading (too large, over quota, a bad
            // path): its reply says why
            if stdin.write_all(&len).await.is_err() || stdin.write_all(&chunk).await.is_err() {
                complete = false;
                break;
            }
        }
        if complete {
            let _ = stdin.write_all(&0u32.to_le_bytes()).await;
        }
        drop(stdin);
    }
    let mut line = String::new();
    // a listing's reply is bounded by the helper; this bounds it here too
    (&mut out).take(MAX_REPLY).read_line(&mut line).await.map_err(|e| format!("the file helper's reply: {e}"))?;
    let reply: Reply = serde_json::from_str(&line).unwrap_or_else(|_| Reply::Failed {
        code: Failure::Internal,
        message: format!("the file helper ended without a reply ({})", line.trim()),
    });
    if matches!(reply, Reply::File { .. }) {
        // reaped when the bytes are through (or the client went away)
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        return Ok((reply, Some(tokio_util::io::ReaderStream::with_capacity(out, 1 << 20))));
    }
    let _ = child.wait().await;
    Ok((reply, None))
}
