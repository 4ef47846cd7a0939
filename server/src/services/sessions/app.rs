//! Reaching a session's app: over the Unix socket it listens on in its
//! job's own output directory (the job has no network of its own, and
//! the socket's mode is the app's only secret: it asks no token).
//!
//! The job owns that directory and could put a link to any other socket
//! there (Docker's, another user's session): the server is root and
//! would follow it. So every connection is checked at the other end
//! (`SO_PEERCRED`): the listening process must run as the job's uid, or
//! nothing is sent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;

/// The socket's name in the job's output directory.
pub const SOCKET: &str = ".jpu-session.sock";

/// How long one question to the app may take (readiness, kernels).
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a session's app listens and whose it must be.
#[derive(Debug, Clone)]
pub struct AppAddress {
    pub socket: PathBuf,
    pub uid: u32,
}

impl AppAddress {
    pub fn new(output_dir: &Path, uid: u32) -> Self {
        Self { socket: output_dir.join(SOCKET), uid }
    }

    /// A connection to the app, once its listener is known to be the
    /// job's own.
    pub async fn connect(&self) -> std::io::Result<UnixStream> {
        let stream = UnixStream::connect(&self.socket).await?;
        let peer = stream.peer_cred()?;
        if peer.uid() != self.uid {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("the socket's listener runs as uid {}, not the session's {}", peer.uid(), self.uid),
            ));
        }
        Ok(stream)
    }

    /// `GET path` from the app, as JSON; `None` when it does not answer
    /// (yet) or answers with anything but 200 and JSON.
    pub async fn get_json(&self, path: &str) -> Option<serde_json::Value> {
        tokio::time::timeout(ASK_TIMEOUT, self.get_json_now(path)).await.ok().flatten()
    }

    async fn get_json_now(&self, path: &str) -> Option<serde_json::Value> {
        let stream = self.connect().await.ok()?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.ok()?;
        let driver = tokio::spawn(connection);
        let request = hyper::Request::get(path).header("host", "localhost").body(Empty::<Bytes>::new()).ok()?;
        let response = sender.send_request(request).await.ok()?;
        let ok = response.status() == hyper::StatusCode::OK;
        let body = response.into_body().collect().await.ok()?.to_bytes();
        driver.abort();
        ok.then(|| serde_json::from_slice(&body).ok()).flatten()
    }
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
