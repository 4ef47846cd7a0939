//! Reaching a session's app, on each executor:
//!
//! - **local**: over the Unix socket it listens on in its job's own output
//!   directory (the job has no network of its own, and the socket's mode
//!   is the app's only secret: it asks no token). The job owns that
//!   directory and could put a link to any other socket there (Docker's,
//!   another user's session): the server is root and would follow it. So
//!   every connection is checked at the other end (`SO_PEERCRED`): the
//!   listening process must run as the job's uid, or nothing is sent.
//! - **Slurm**: over TCP to the node the job runs on, at the address
//!   Slurm's node list gives (`nodes.addr`), never one the job chooses.
//!   Anyone on the cluster can reach that port, so the app asks a token
//!   the job made itself (0600 in its own directory); the port and token
//!   are read from the file Jupyter writes there (`jpserver-*.json`). The
//!   job picks only the port (≥ 1024, on its own node), which gives it
//!   nothing it could not reach from its own job. The proxy adds the
//!   token to requests and scrubs it from responses (`/lab` writes it
//!   into its page), so it never reaches the browser.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};

/// The socket's name in the job's output directory (local executor).
pub const SOCKET: &str = ".jpu-session.sock";
/// Jupyter's runtime directory in the job's output directory (Slurm):
/// the token the job made, and the file where Jupyter says its port.
pub const RUNTIME_DIR: &str = ".jpu-session";

/// How long one question to the app may take (readiness, kernels).
const ASK_TIMEOUT: Duration = Duration::from_secs(5);
/// The runtime file is the job's to write: read no more of it than this.
const MAX_RUNTIME_FILE: u64 = 64 * 1024;
/// Largest answer to the watcher's questions read (`api/status`,
/// `api/kernels`: a few KB even with dozens of kernels).
const MAX_ANSWER: usize = 1024 * 1024;

/// Where a session's app listens and whose it must be.
#[derive(Debug, Clone)]
pub enum AppAddress {
    /// A Unix socket whose listener must run as `uid`.
    Socket { socket: PathBuf, uid: u32 },
    /// A TCP port on `host` (the node's address), announced in `runtime`.
    Node { host: String, runtime: PathBuf },
}

/// Anything a connection to the app can be.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// An open connection, and the token requests on it must carry.
pub struct Connection {
    pub stream: Pin<Box<dyn Io>>,
    pub token: Option<String>,
}

impl AppAddress {
    /// The app of the session whose job writes to `output_dir`: on a
    /// Slurm node (`node_addr`) or over its socket here.
    pub fn new(output_dir: &Path, uid: u32, node_addr: Option<&str>) -> Self {
        match node_addr {
            Some(host) => Self::Node { host: host.to_string(), runtime: output_dir.join(RUNTIME_DIR) },
            None => Self::Socket { socket: output_dir.join(SOCKET), uid },
        }
    }

    /// A connection to the app, once its listener is known to be the
    /// job's own (socket) or its node's (TCP).
    pub async fn connect(&self) -> std::io::Result<Connection> {
        match self {
            Self::Socket { socket, uid } => {
                let stream = UnixStream::connect(socket).await?;
                let peer = stream.peer_cred()?;
                if peer.uid() != *uid {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        format!("the socket's listener runs as uid {}, not the session's {uid}", peer.uid()),
                    ));
                }
                Ok(Connection { stream: Box::pin(stream), token: None })
            }
            Self::Node { host, runtime } => {
                let (port, token) = announced(runtime).await?;
                let stream = TcpStream::connect((host.as_str(), port)).await?;
                stream.set_nodelay(true)?;
                Ok(Connection { stream: Box::pin(stream), token: Some(token) })
            }
        }
    }

    /// `GET path` from the app, as JSON; `None` when it does not answer
    /// (yet) or answers with anything but 200 and JSON.
    pub async fn get_json(&self, path: &str) -> Option<serde_json::Value> {
        tokio::time::timeout(ASK_TIMEOUT, self.get_json_now(path)).await.ok().flatten()
    }

    async fn get_json_now(&self, path: &str) -> Option<serde_json::Value> {
        let Connection { stream, token } = self.connect().await.ok()?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.ok()?;
        let driver = tokio::spawn(connection);
        let mut request = hyper::Request::get(path).header("host", "localhost");
        if let Some(token) = token {
            request = request.header("authorization", format!("token {token}"));
        }
        let response = sender.send_request(request.body(Empty::<Bytes>::new()).ok()?).await.ok()?;
        let ok = response.status() == hyper::StatusCode::OK;
        // the app is the job's code: its answer is read no further than a
        // status page needs (an endless one once took the server's RSS
        // from 113 MB to 2.1 GB: #42 W1)
        let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER).collect().await.ok()?.to_bytes();
        driver.abort();
        ok.then(|| serde_json::from_slice(&body).ok()).flatten()
    }
}

/// The port and token Jupyter announced in `runtime/jpserver-*.json`
/// (the newest, if a restarted app left an old one).
async fn announced(runtime: &Path) -> std::io::Result<(u16, String)> {
    let runtime = runtime.to_path_buf();
    tokio::task::spawn_blocking(move || read_announced(&runtime))
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?
}

fn read_announced(runtime: &Path) -> std::io::Result<(u16, String)> {
    use std::io::Read;
    let invalid = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(runtime)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // a link could point the server (root) at any file: plain files only
        let meta = entry.metadata()?;
        if !(name.starts_with("jpserver-") && name.ends_with(".json") && meta.file_type().is_file()) {
            continue;
        }
        let at = meta.modified()?;
        if newest.as_ref().is_none_or(|(t, _)| at > *t) {
            newest = Some((at, entry.path()));
        }
    }
    let (_, path) = newest.ok_or_else(|| invalid("the app has not announced its port yet"))?;
    let file = crate::executor::record::open_plain(&path)?;
    let mut text = String::new();
    file.take(MAX_RUNTIME_FILE).read_to_string(&mut text)?;
    parse_announced(&text).ok_or_else(|| invalid("the app's runtime file names no usable port and token"))
}

/// `{"port": …, "token": …}` with an unprivileged port and a token of
/// the characters a header and a scrub can carry.
fn parse_announced(text: &str) -> Option<(u16, String)> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let port = u16::try_from(value.get("port")?.as_u64()?).ok().filter(|p| *p >= 1024)?;
    let token = value.get("token")?.as_str()?;
    let fine =
        (16..=256).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
    fine.then(|| (port, token.to_string()))
}

/// Whether the app answers as Jupyter does at `{base}api/status`.
pub async fn answers(app: &AppAddress, base: &str) -> bool {
    app.get_json(&format!("{base}api/status")).await.is_some_and(|v| v.get("started").is_some())
}

/// Whether a kernel is running code now (`execution_state` `busy`):
/// a long computation keeps its session alive without traffic. Asking
/// does not itself count as use. `None`: the app did not answer.
pub async fn kernel_busy(app: &AppAddress, base: &str) -> Option<bool> {
    let kernels = app.get_json(&format!("{base}api/kernels")).await?;
    Some(kernels.as_array()?.iter().any(|k| k.get("execution_state").and_then(|s| s.as_str()) == Some("busy")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unprivileged_port_and_a_plain_token_are_taken() {
        let ok = r#"{"port": 40123, "token": "0123456789abcdef0123", "pid": 7}"#;
        assert_eq!(parse_announced(ok), Some((40123, "0123456789abcdef0123".into())));
        for bad in [
            r#"{"port": 22, "token": "0123456789abcdef0123"}"#,
            r#"{"port": 70000, "token": "0123456789abcdef0123"}"#,
            r#"{"port": 40123, "token": "short"}"#,
            r#"{"port": 40123, "token": "0123456789abcdef\r\nX-Evil: 1"}"#,
            r#"{"port": 40123}"#,
            "not json",
        ] {
            assert_eq!(parse_announced(bad), None, "{bad}");
        }
    }

    /// Serves one HTTP answer per connection on a socket: `endless`
    /// streams JSON-looking bytes until the reader stops.
    async fn app_on_socket(dir: &Path, endless: bool) -> AppAddress {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let socket = dir.join(SOCKET);
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = conn.read(&mut buf).await;
                    if !endless {
                        let body = r#"{"started": "now"}"#;
                        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}", body.len());
                        let _ = conn.write_all(head.as_bytes()).await;
                        return;
                    }
                    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n[\r\n").await;
                    let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "0,".repeat(32 * 1024));
                    while conn.write_all(chunk.as_bytes()).await.is_ok() {}
                });
            }
        });
        AppAddress::Socket { socket, uid: nix::unistd::geteuid().as_raw() }
    }

    /// W1: the app is the job's code; an answer that never ends is
    /// dropped after `MAX_ANSWER` bytes instead of filling the server.
    #[tokio::test]
    async fn an_endless_answer_is_read_no_further_than_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let fine = app_on_socket(dir.path(), false).await;
        assert!(answers(&fine, "/").await, "a plain answer is read");
        let endless_dir = tempfile::tempdir().unwrap();
        let endless = app_on_socket(endless_dir.path(), true).await;
        let started = std::time::Instant::now();
        assert_eq!(endless.get_json("/api/kernels").await, None);
        assert!(started.elapsed() < ASK_TIMEOUT, "given up at the bound, not at the timeout");
    }

    /// The job writes its runtime folder: a link there (to a file the job
    /// cannot read itself) is never followed by the server, root.
    #[test]
    fn a_linked_runtime_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("roots-only.json");
        std::fs::write(&elsewhere, r#"{"port": 40123, "token": "0123456789abcdef0123"}"#).unwrap();
        let runtime = dir.path().join(RUNTIME_DIR);
        std::fs::create_dir(&runtime).unwrap();
        std::os::unix::fs::symlink(&elsewhere, runtime.join("jpserver-7.json")).unwrap();
        assert!(read_announced(&runtime).is_err(), "a link was read");
        std::fs::copy(&elsewhere, runtime.join("jpserver-8.json")).unwrap();
        assert_eq!(read_announced(&runtime).unwrap(), (40123, "0123456789abcdef0123".into()));
    }
}
