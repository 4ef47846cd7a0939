//! `jpu session`: start an interactive session and wait until its app
//! answers (printing where it waits meanwhile, on stderr), then print the
//! URL to open; list one's sessions. A session is a job, so `jpu cancel`,
//! `jpu show` and `jpu logs` work on it as on any other.

use std::time::Duration;

use serde_json::{json, Value};

use super::client::{exit, CliError, Client};
use super::render::{print, table, text};

/// How often `start` asks whether the session is ready.
const POLL: Duration = Duration::from_secs(1);

pub struct StartArgs {
    pub app: String,
    pub gpus: u32,
    pub time: Option<u32>,
    pub workspace: Option<String>,
    pub min_vram: Option<u32>,
    pub no_wait: bool,
}

pub async fn start(json: bool, args: StartArgs) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let mut body = json!({"app": args.app, "num_gpus": args.gpus});
    if let Some(minutes) = args.time {
        body["time_limit_minutes"] = json!(minutes);
    }
    if let Some(workspace) = args.workspace {
        body["workspace"] = json!(workspace);
    }
    if let Some(gb) = args.min_vram {
        body["min_vram_gb"] = json!(gb);
    }
    let mut job = client.post("/v1/sessions", &body).await?;
    let id = job["id"].as_i64().ok_or_else(|| CliError::new(exit::SERVER, "the server sent no job id"))?;
    if !args.no_wait {
        eprintln!("session {id} submitted; waiting until it is ready (Ctrl-C stops waiting, not the session)");
        job = wait_ready(&client, id).await?;
    }
    let url = format!("{}{}", client.server.trim_end_matches('/'), text(&job["session"]["url"]));
    print(json, &job, |j| match j["session"]["state"].as_str() {
        Some("READY") => format!("session {id} is ready: open {url}\nend it with `jpu cancel {id}`"),
        _ => format!("session {id} submitted ({}); `jpu session list` shows when it is ready", text(&j["state"])),
    });
    Ok(())
}

/// Polls the job until its session is READY; an end before that is an
/// error carrying the job's end reason.
async fn wait_ready(client: &Client, id: i64) -> Result<Value, CliError> {
    let mut said = String::new();
    loop {
        let job = client.get(&format!("/v1/jobs/{id}")).await?;
        match job["session"]["state"].as_str() {
            Some("READY") => return Ok(job),
            Some("ENDED") => {
                return Err(CliError::new(
                    exit::REFUSED,
                    format!(
                        "session {id} ended before it was ready: {} ({}); see `jpu logs {id}`",
                        text(&job["state"]),
                        text(&job["end_reason"])
                    ),
                ))
            }
            _ => {}
        }
        let now = progress(&job);
        if now != said {
            eprintln!("{now}");
            said = now;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// One line on where a session that is not ready yet stands.
fn progress(job: &Value) -> String {
    match job["session"]["state"].as_str() {
        Some("STARTING") => "starting the app…".into(),
        _ => {
            let mut line = format!("waiting in the queue: {}", text(&job["pending_reason"]));
            if let Some(at) = job["estimated_start"].as_str() {
                line.push_str(&format!(" (expected to start about {at}, an estimate)"));
            }
            line
        }
    }
}

pub async fn list(json: bool) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let page = client.get("/v1/jobs?kind=session&limit=50").await?;
    let server = client.server.trim_end_matches('/').to_string();
    print(json, &page, |p| {
        let rows: Vec<Vec<String>> = p["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|j| {
                let s = &j["session"];
                let url = if s["state"] == "READY" { format!("{server}{}", text(&s["url"])) } else { "-".into() };
                vec![
                    text(&j["id"]),
                    text(&s["app"]),
                    text(&s["state"]),
                    text(&j["num_gpus"]),
                    text(&s["idle_ends_at"]),
                    url,
                ]
            })
            .collect();
        table(&["ID", "APP", "STATE", "GPUS", "ENDS IF IDLE AT", "URL"], &rows)
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_says_where_a_session_waits() {
        let waiting = json!({"state": "GLOBAL_QUEUE_WAIT", "pending_reason": "RESOURCES",
                             "estimated_start": "2026-12-05T10:00:00Z", "session": {"state": "WAITING"}});
        assert_eq!(
            progress(&waiting),
            "waiting in the queue: RESOURCES (expected to start about 2026-12-05T10:00:00Z, an estimate)"
        );
        assert_eq!(progress(&json!({"session": {"state": "STARTING"}})), "starting the app…");
    }
}
