//! One function per `jpu` subcommand: call the API, print its answer
//! (a table, or the JSON with `--json`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::client::{self, exit, CliError, Client, Stored};
use super::render::{job_rows, print, reason_notes, table, text};
use super::SubmitArgs;

pub async fn login(json: bool, server: String, username: String) -> Result<(), CliError> {
    let password = match std::env::var("JPU_PASSWORD") {
        Ok(p) => p,
        Err(_) => rpassword::prompt_password(format!("password for {username}: "))
            .map_err(|e| CliError::new(exit::USAGE, format!("cannot read the password: {e}")))?,
    };
    let client = Client::new(&server, None);
    let answer = client.post("/v1/auth/token", &json!({"username": username, "password": password})).await?;
    let token = answer["token"].as_str().ok_or_else(|| CliError::new(exit::SERVER, "the server sent no token"))?;
    client::save(&Stored { server: client.server.clone(), token: token.to_string() })?;
    print(json, &json!({"server": client.server, "expires_at": answer["expires_at"]}), |_| {
        format!("signed in to {} as {username} (token expires {})", client.server, text(&answer["expires_at"]))
    });
    Ok(())
}

pub async fn logout(json: bool) -> Result<(), CliError> {
    let client = Client::from_config()?;
    if client.token().is_some() {
        // already revoked or expired is fine: forget it anyway
        let _ = client.call(reqwest::Method::DELETE, "/v1/auth/token", None).await;
    }
    client::forget();
    print(json, &json!({"signed_out": true}), |_| "signed out".into());
    Ok(())
}

pub async fn submit(json: bool, args: SubmitArgs) -> Result<(), CliError> {
    let SubmitArgs { script, gpus, name, time, env, workspace, min_vram, after, array } = args;
    let client = Client::from_config()?;
    let command = std::fs::read_to_string(&script)
        .map_err(|e| CliError::new(exit::USAGE, format!("cannot read {}: {e}", script.display())))?;
    let name = name.unwrap_or_else(|| {
        script.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into())
    });
    let mut vars = BTreeMap::new();
    for pair in env {
        let (k, v) =
            pair.split_once('=').ok_or_else(|| CliError::new(exit::USAGE, format!("--env {pair}: write KEY=value")))?;
        vars.insert(k.to_string(), v.to_string());
    }
    let mut body = json!({"name": name, "command": command, "num_gpus": gpus, "env": vars});
    if let Some(minutes) = time {
        body["time_limit_minutes"] = json!(minutes);
    }
    if let Some(workspace) = workspace {
        body["workspace"] = json!(workspace);
    }
    if let Some(gb) = min_vram {
        body["min_vram_gb"] = json!(gb);
    }
    if let Some(after) = after {
        let deps =
            app::model::views::parse_after(&after).map_err(|e| CliError::new(exit::USAGE, format!("--after: {e}")))?;
        body["dependencies"] = deps.into_iter().map(|(kind, job)| json!({"type": kind, "job": job})).collect();
    }
    if let Some(array) = array {
        body["array"] = json!(array);
    }
    let answer = client.post("/v1/jobs", &body).await?;
    print(json, &answer, |a| match a["array_id"].as_i64() {
        Some(array) => {
            let jobs = a["jobs"].as_array().cloned().unwrap_or_default();
            let ids: Vec<i64> = jobs.iter().filter_map(|j| j["id"].as_i64()).collect();
            let (first, last) = (ids.iter().min().copied().unwrap_or(0), ids.iter().max().copied().unwrap_or(0));
            format!(
                "submitted array {array}: {} jobs ({first}–{last}); list them with `jpu jobs --array {array}`",
                ids.len()
            )
        }
        None => format!("submitted job {} ({}), {}", text(&a["id"]), text(&a["name"]), text(&a["state"])),
    });
    Ok(())
}

pub async fn queue(json: bool) -> Result<(), CliError> {
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
                                text(&e["estimated_start"]),
                            ]
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let headers = ["RANK", "ID", "NAME", "LAB", "USER", "GPUS", "WHY IT WAITS", "EXPECTED START (ESTIMATE)"];
        let all = q["jobs"].as_array().into_iter().chain(q["user_queue"].as_array()).flatten();
        format!(
            "{}\n\nyour personal queue:\n{}{}",
            table(&headers, &rows(&q["jobs"])),
            table(&headers, &rows(&q["user_queue"])),
            reason_notes(&client.server, all.map(|e| &e["pending_reason"]))
        )
    });
    Ok(())
}

pub async fn jobs(json: bool, state: Option<String>, array: Option<i64>, limit: u32) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let mut path = format!("/v1/jobs?limit={limit}");
    if let Some(state) = state {
        path.push_str(&format!("&state={state}"));
    }
    if let Some(array) = array {
        path.push_str(&format!("&array={array}"));
    }
    let page = client.get(&path).await?;
    print(json, &page, |p| {
        let jobs = p["jobs"].as_array().cloned().unwrap_or_default();
        let notes = reason_notes(&client.server, jobs.iter().map(|j| &j["pending_reason"]));
        table(&["ID", "NAME", "USER", "STATE", "GPUS", "WHERE", "WHY IT WAITS"], &job_rows(&jobs)) + &notes
    });
    Ok(())
}

pub async fn show(json: bool, id: i64) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let job = client.get(&format!("/v1/jobs/{id}")).await?;
    print(json, &job, |j| {
        let mut out = table(
            &["ID", "NAME", "USER", "STATE", "GPUS", "WHERE", "WHY IT WAITS"],
            &job_rows(std::slice::from_ref(j)),
        );
        if let Some(at) = j["estimated_start"].as_str() {
            out.push_str(&format!("\nexpected to start about {at} (an estimate from the scheduler's forecast)\n"));
        }
        if let Some(array) = j["array"].as_object() {
            out.push_str(&format!("\nelement {} of array {}\n", text(&array["index"]), text(&array["id"])));
        }
        for d in j["dependencies"].as_array().into_iter().flatten() {
            out.push_str(&format!("runs {} job {} (now {})\n", text(&d["type"]), text(&d["job"]), text(&d["state"])));
        }
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
        let attempt_reasons = j["attempts"].as_array().into_iter().flatten().map(|a| &a["reason"]);
        let reasons = [&j["pending_reason"], &j["end_reason"]].into_iter().chain(attempt_reasons);
        out.push_str(&reason_notes(&client.server, reasons));
        out
    });
    Ok(())
}

pub async fn logs(json: bool, id: i64, follow: bool) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let mut offset = 0u64;
    loop {
        let chunk = client.get(&format!("/v1/jobs/{id}/logs?offset={offset}")).await?;
        let data = chunk["data"].as_str().unwrap_or_default();
        if json {
            println!("{chunk}");
        } else {
            // the job's bytes: its escapes and carriage returns are shown,
            // never obeyed by the terminal (app::model::log_text)
            print!("{}", app::model::log_text::visible(data));
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
    Ok(())
}

pub async fn cancel(json: bool, id: i64) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let job = client.post(&format!("/v1/jobs/{id}/cancel"), &json!({})).await?;
    print(json, &job, |j| format!("job {} is {}", text(&j["id"]), text(&j["state"])));
    Ok(())
}

pub async fn cancel_array(json: bool, id: i64) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let array = client.post(&format!("/v1/arrays/{id}/cancel"), &json!({})).await?;
    print(json, &array, |a| {
        let jobs = a["jobs"].as_array().cloned().unwrap_or_default();
        let count = |s: &str| jobs.iter().filter(|j| j["state"] == s).count();
        format!(
            "array {id}: {} cancelled, {} cancelling (grace period), {} already ended",
            count("CANCELLED"),
            count("CANCELLING"),
            count("COMPLETED") + count("FAILED")
        )
    });
    Ok(())
}

pub async fn usage(json: bool) -> Result<(), CliError> {
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
    Ok(())
}

pub async fn maintenance(json: bool, action: String, message: Option<String>) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let status = match action.as_str() {
        "status" => client.get("/v1/maintenance/status").await?,
        "start" => client.post("/v1/admin/maintenance", &json!({"action": "start", "message": message})).await?,
        _ => client.post("/v1/admin/maintenance", &json!({"action": "end"})).await?,
    };
    print(json, &status, |s| match s["message"].as_str() {
        Some(m) => format!("{} since {}: {m}", text(&s["phase"]), text(&s["since"])),
        None => format!("{} since {}", text(&s["phase"]), text(&s["since"])),
    });
    Ok(())
}
