//! `jpu`, the command-line client of the /v1 API. Human tables by
//! default, `--json` for scripts; errors are the API's own message; exit
//! codes in [`client::exit`].

pub mod client;
pub mod render;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{json, Value};

use client::{exit, CliError, Client, Stored};
use render::{table, text};

#[derive(Parser)]
#[command(name = "jpu", version, about = "Submit and follow GPU jobs on JPU-Share")]
pub struct Cli {
    /// Print the API's JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Sign in and keep the token (readable by you only) for later commands.
    Login {
        /// Server URL, e.g. http://gpu.example.edu:8080
        #[arg(long, env = "JPU_SERVER")]
        server: String,
        #[arg(long, short, env = "USER")]
        username: String,
    },
    /// Revoke the stored token and forget it.
    Logout,
    /// Submit a bash script.
    Submit {
        script: PathBuf,
        #[arg(long, default_value_t = 1)]
        gpus: u32,
        /// Job name (default: the script's file name).
        #[arg(long)]
        name: Option<String>,
        /// Time limit in minutes.
        #[arg(long)]
        time: Option<u32>,
        /// Environment variable for the job, KEY=value (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// Run inside this READY workspace of your lab (its container image).
        #[arg(long)]
        workspace: Option<String>,
    },
    /// The global queue in this cycle's order, and your personal queue.
    Queue,
    /// Your lab's jobs, newest first.
    Jobs {
        /// Only these states (comma-separated), e.g. RUNNING
        #[arg(long)]
        state: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One job with its attempts.
    Show { id: i64 },
    /// A job's output; `-f` follows it until the job ends.
    Logs {
        id: i64,
        #[arg(short, long)]
        follow: bool,
    },
    /// Cancel a job (running jobs get their grace period).
    Cancel { id: i64 },
    /// Every lab's decayed usage, running GPUs and waiting jobs.
    Usage,
    /// Maintenance status, or start/end it (admins).
    Maintenance {
        #[arg(value_parser = ["status", "start", "end"])]
        action: String,
        /// Shown to users while maintenance is on.
        #[arg(long)]
        message: Option<String>,
    },
}

/// Runs the CLI and returns the process exit code.
pub async fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { exit::USAGE } else { 0 });
        }
    };
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jpu: {}", e.message);
            std::process::ExitCode::from(e.code)
        }
    }
}

fn print(json: bool, value: &Value, human: impl FnOnce(&Value) -> String) {
    if json {
        println!("{}", serde_json::to_string_pretty(value).unwrap_or_default());
    } else {
        println!("{}", human(value));
    }
}

fn job_rows(jobs: &[Value]) -> Vec<Vec<String>> {
    jobs.iter()
        .map(|j| {
            let place = match (j["node"].as_str(), j["tier"].as_str()) {
                (Some(n), Some(t)) => format!("{n} ({t})"),
                _ => "-".into(),
            };
            vec![
                text(&j["id"]),
                text(&j["name"]),
                text(&j["user"]),
                text(&j["state"]),
                text(&j["num_gpus"]),
                place,
                text(&j["pending_reason"]),
            ]
        })
        .collect()
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let json = cli.json;
    match cli.command {
        Command::Login { server, username } => {
            let password = match std::env::var("JPU_PASSWORD") {
                Ok(p) => p,
                Err(_) => rpassword::prompt_password(format!("password for {username}: "))
                    .map_err(|e| CliError::new(exit::USAGE, format!("cannot read the password: {e}")))?,
            };
            let client = Client::new(&server, None);
            let answer = client.post("/v1/auth/token", &json!({"username": username, "password": password})).await?;
            let token =
                answer["token"].as_str().ok_or_else(|| CliError::new(exit::SERVER, "the server sent no token"))?;
            client::save(&Stored { server: client.server.clone(), token: token.to_string() })?;
            print(json, &json!({"server": client.server, "expires_at": answer["expires_at"]}), |_| {
                format!("signed in to {} as {username} (token expires {})", client.server, text(&answer["expires_at"]))
            });
        }
        Command::Logout => {
            let client = Client::from_config()?;
            if client.token().is_some() {
                // already revoked or expired is fine: forget it anyway
                let _ = client.call(reqwest::Method::DELETE, "/v1/auth/token", None).await;
            }
            client::forget();
            print(json, &json!({"signed_out": true}), |_| "signed out".into());
        }
        Command::Submit { script, gpus, name, time, env, workspace } => {
            let client = Client::from_config()?;
            let command = std::fs::read_to_string(&script)
                .map_err(|e| CliError::new(exit::USAGE, format!("cannot read {}: {e}", script.display())))?;
            let name = name.unwrap_or_else(|| {
                script.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into())
            });
            let mut vars = BTreeMap::new();
            for pair in env {
                let (k, v) = pair
                    .split_once('=')
                    .ok_or_else(|| CliError::new(exit::USAGE, format!("--env {pair}: write KEY=value")))?;
                vars.insert(k.to_string(), v.to_string());
            }
            let mut body = json!({"name": name, "command": command, "num_gpus": gpus, "env": vars});
            if let Some(minutes) = time {
                body["time_limit_minutes"] = json!(minutes);
            }
            if let Some(workspace) = workspace {
                body["workspace"] = json!(workspace);
            }
            let job = client.post("/v1/jobs", &body).await?;
            print(json, &job, |j| {
                format!("submitted job {} ({}), {}", text(&j["id"]), text(&j["name"]), text(&j["state"]))
            });
        }
        Command::Queue => {
            let client = Client::from_config()?;
            let queue = client.get("/v1/queue").await?;
            print(json, &queue, |q| {
                let rows = |list: &Value| -> Vec<Vec<String>> {
                    list.as_array()
                        .map(|a| {
                            a.iter()
                                .map(|e| {
                                    vec![
                                        text(&e["rank"]),
                                        text(&e["id"]),
                                        text(&e["name"]),
                                        text(&e["lab"]),
                                        text(&e["user"]),
                                        text(&e["num_gpus"]),
                                        text(&e["pending_reason"]),
                                    ]
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let headers = ["RANK", "ID", "NAME", "LAB", "USER", "GPUS", "WHY IT WAITS"];
                format!(
                    "{}\n\nyour personal queue:\n{}",
                    table(&headers, &rows(&q["jobs"])),
                    table(&headers, &rows(&q["user_queue"]))
                )
            });
        }
        Command::Jobs { state, limit } => {
            let client = Client::from_config()?;
            let mut path = format!("/v1/jobs?limit={limit}");
            if let Some(state) = state {
                path.push_str(&format!("&state={state}"));
            }
            let page = client.get(&path).await?;
            print(json, &page, |p| {
                let jobs = p["jobs"].as_array().cloned().unwrap_or_default();
                table(&["ID", "NAME", "USER", "STATE", "GPUS", "WHERE", "WHY IT WAITS"], &job_rows(&jobs))
            });
        }
        Command::Show { id } => {
            let client = Client::from_config()?;
            let job = client.get(&format!("/v1/jobs/{id}")).await?;
            print(json, &job, |j| {
                let mut out = table(
                    &["ID", "NAME", "USER", "STATE", "GPUS", "WHERE", "WHY IT WAITS"],
                    &job_rows(std::slice::from_ref(j)),
                );
                out.push_str(&format!(
                    "\nend reason: {}  exit code: {}  usage: {} TFLOP·s\n\nattempts:\n",
                    text(&j["end_reason"]),
                    text(&j["exit_code"]),
                    text(&j["usage_tflop_s"])
                ));
                let attempts: Vec<Vec<String>> = j["attempts"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|a| {
                                vec![
                                    text(&a["attempt"]),
                                    text(&a["tier"]),
                                    text(&a["node"]),
                                    text(&a["started_at"]),
                                    text(&a["ended_at"]),
                                    text(&a["exit_code"]),
                                    text(&a["reason"]),
                                ]
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.push_str(&table(&["#", "TIER", "NODE", "STARTED", "ENDED", "EXIT", "REASON"], &attempts));
                out
            });
        }
        Command::Logs { id, follow } => {
            let client = Client::from_config()?;
            let mut offset = 0u64;
            loop {
                let chunk = client.get(&format!("/v1/jobs/{id}/logs?offset={offset}")).await?;
                let data = chunk["data"].as_str().unwrap_or_default();
                if json {
                    println!("{chunk}");
                } else {
                    print!("{data}");
                }
                offset = chunk["next_offset"].as_u64().unwrap_or(offset);
                let eof = chunk["eof"].as_bool().unwrap_or(true);
                if data.is_empty() && (eof || !follow) {
                    break;
                }
                if data.is_empty() {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
        Command::Cancel { id } => {
            let client = Client::from_config()?;
            let job = client.post(&format!("/v1/jobs/{id}/cancel"), &json!({})).await?;
            print(json, &job, |j| format!("job {} is {}", text(&j["id"]), text(&j["state"])));
        }
        Command::Usage => {
            let client = Client::from_config()?;
            let labs = client.get("/v1/labs").await?;
            print(json, &labs, |l| {
                let rows: Vec<Vec<String>> = l
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|l| {
                                vec![
                                    text(&l["name"]),
                                    text(&l["usage_tflop_s"]),
                                    text(&l["running_gpus"]),
                                    text(&l["queued_jobs"]),
                                ]
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                table(&["LAB", "USAGE (TFLOP·s)", "RUNNING GPUS", "WAITING JOBS"], &rows)
            });
        }
        Command::Maintenance { action, message } => {
            let client = Client::from_config()?;
            let status = match action.as_str() {
                "status" => client.get("/v1/maintenance/status").await?,
                "start" => {
                    client.post("/v1/admin/maintenance", &json!({"action": "start", "message": message})).await?
                }
                _ => client.post("/v1/admin/maintenance", &json!({"action": "end"})).await?,
            };
            print(json, &status, |s| match s["message"].as_str() {
                Some(m) => format!("{} since {}: {m}", text(&s["phase"]), text(&s["since"])),
                None => format!("{} since {}", text(&s["phase"]), text(&s["since"])),
            });
        }
    }
    Ok(())
}
