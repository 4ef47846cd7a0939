//! The `jpu` client's connection to a JPU-Share server: where the token
//! is kept (the user's config dir, mode 0600) and one request helper that
//! turns the API's error body into a message and an exit code.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Exit codes scripts can rely on.
pub mod exit {
    /// The server refused the request (4xx other than 401).
    pub const REFUSED: u8 = 1;
    /// Bad command line (clap's own code).
    pub const USAGE: u8 = 2;
    /// Not signed in, or the token expired or was revoked.
    pub const AUTH: u8 = 3;
    /// The server is unreachable or failed (5xx).
    pub const SERVER: u8 = 4;
}

#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
}

impl CliError {
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stored {
    pub server: String,
    pub token: String,
}

/// `$JPU_CONFIG_DIR`, else `$XDG_CONFIG_HOME/jpu`, else `~/.config/jpu`.
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("JPU_CONFIG_DIR") {
        return dir.into();
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("jpu")
}

fn config_file() -> PathBuf {
    config_dir().join("config.json")
}

pub fn load() -> Result<Stored, CliError> {
    let text = std::fs::read_to_string(config_file())
        .map_err(|_| CliError::new(exit::AUTH, "not signed in: run `jpu login --server URL` first"))?;
    serde_json::from_str(&text).map_err(|e| {
        CliError::new(exit::AUTH, format!("cannot read {}: {e}; run `jpu login` again", config_file().display()))
    })
}

/// Writes the token readable by the user only.
pub fn save(stored: &Stored) -> Result<(), CliError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| {
        CliError::new(exit::REFUSED, format!("cannot save the token in {}: {e}", config_dir().display()))
    };
    std::fs::create_dir_all(config_dir()).map_err(io)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(config_file())
        .map_err(io)?;
    file.write_all(serde_json::to_string_pretty(stored).unwrap_or_default().as_bytes()).map_err(io)?;
    Ok(())
}

pub fn forget() {
    let _ = std::fs::remove_file(config_file());
}

pub struct Client {
    pub server: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    pub fn new(server: &str, token: Option<String>) -> Self {
        Self { server: server.trim_end_matches('/').to_string(), token, http: reqwest::Client::new() }
    }

    pub fn from_config() -> Result<Self, CliError> {
        let stored = load()?;
        Ok(Self::new(&stored.server, Some(stored.token)))
    }

    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Sends a request; a JSON body of `null` is sent as none. Returns the
    /// response body (JSON, or `Value::String` for non-JSON bodies).
    pub async fn call(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> Result<Value, CliError> {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = self.send(request).await?;
        let status = response.status();
        let text =
            response.text().await.map_err(|e| CliError::new(exit::SERVER, format!("reading the answer: {e}")))?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if status.is_success() {
            return Ok(value);
        }
        Err(refusal(status, &value))
    }

    /// A request to `path` carrying the token, for bodies that are not
    /// JSON (files, streamed).
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.server));
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends it; a refusal (4xx, 5xx) is the API's message.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, CliError> {
        request.send().await.map_err(|e| CliError::new(exit::SERVER, format!("cannot reach {}: {e}", self.server)))
    }

    /// The response if it succeeded, else its refusal.
    pub async fn succeeded(response: reqwest::Response) -> Result<reqwest::Response, CliError> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response.text().await.unwrap_or_default();
        Err(refusal(status, &serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    pub async fn get(&self, path: &str) -> Result<Value, CliError> {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, CliError> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }
}

/// An API error body as a message and an exit code.
fn refusal(status: reqwest::StatusCode, value: &Value) -> CliError {
    let code = value["error"]["code"].as_str().unwrap_or("ERROR").to_string();
    let message = value["error"]["message"].as_str().map(str::to_string).unwrap_or_else(|| status.to_string());
    let exit_code = match status.as_u16() {
        401 => exit::AUTH,
        500.. => exit::SERVER,
        _ => exit::REFUSED,
    };
    CliError::new(exit_code, format!("{code}: {message}"))
}
