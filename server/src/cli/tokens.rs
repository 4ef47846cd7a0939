//! `jpu login --token` (a personal token read from standard input, so it
//! never lands in the shell's history or the process list) and `jpu
//! tokens`: list, create (the secret printed once) and revoke the
//! caller's tokens.

use std::io::Read;

use serde_json::{json, Value};

use super::client::{self, exit, CliError, Client, Stored};
use super::render::{print, table, text};

/// Reads the token, checks it with `GET /v1/me`, and keeps it.
pub async fn login_with_token(json: bool, server: String) -> Result<(), CliError> {
    let mut input = String::new();
    std::io::stdin()
        .take(4096)
        .read_to_string(&mut input)
        .map_err(|e| CliError::new(exit::USAGE, format!("cannot read the token from standard input: {e}")))?;
    let token = input.trim();
    if token.is_empty() {
        return Err(CliError::new(exit::USAGE, "no token on standard input (e.g. `jpu login --token < file`)"));
    }
    let client = Client::new(&server, Some(token.to_string()));
    let me = client.get("/v1/me").await?;
    client::save(&Stored { server: client.server.clone(), token: token.to_string() })?;
    print(json, &json!({"server": client.server, "username": me["username"]}), |_| {
        format!("signed in to {} as {} with a personal token", client.server, text(&me["username"]))
    });
    Ok(())
}

/// `jpu login --sso`: the server's device grant. Prints where to go and
/// the code, polls at the server's pace until the person has approved it
/// there, signing in at the university (or the code expires), and keeps
/// the token.
pub async fn login_with_sso(json: bool, server: String) -> Result<(), CliError> {
    let client = Client::new(&server, None);
    let device = std::env::var("HOSTNAME").ok().or_else(|| std::fs::read_to_string("/etc/hostname").ok());
    let device = device.map(|d| d.trim().chars().take(40).collect::<String>()).unwrap_or_default();
    // the page the person approves on names this device
    let path = match device.as_str() {
        "" => "/v1/auth/device".to_string(),
        name => format!(
            "/v1/auth/device?device={}",
            url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
        ),
    };
    let start = client.post(&path, &json!({})).await?;
    let (uri, code) = (text(&start["verification_uri"]), text(&start["user_code"]));
    let complete = start["verification_uri_complete"].as_str().unwrap_or(&uri).to_string();
    // the instructions go to stderr: with --json, stdout is the result alone
    eprintln!("Open {complete}\n(or {uri} and enter the code {code}) and approve it there; waiting…");
    let every = std::time::Duration::from_secs(start["interval"].as_u64().unwrap_or(5).clamp(1, 60));
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(start["expires_in"].as_u64().unwrap_or(600));
    let body = json!({"device_code": start["device_code"], "device": (!device.is_empty()).then_some(device)});
    loop {
        tokio::time::sleep(every).await;
        match client.post("/v1/auth/device/token", &body).await {
            Ok(answer) => {
                let token =
                    answer["token"].as_str().ok_or_else(|| CliError::new(exit::SERVER, "the server sent no token"))?;
                let me = Client::new(&server, Some(token.to_string())).get("/v1/me").await?;
                client::save(&Stored { server: client.server.clone(), token: token.to_string() })?;
                print(
                    json,
                    &json!({"server": client.server, "username": me["username"], "expires_at": answer["expires_at"]}),
                    |_| {
                        format!(
                            "signed in to {} as {} through the university (token expires {})",
                            client.server,
                            text(&me["username"]),
                            text(&answer["expires_at"])
                        )
                    },
                );
                return Ok(());
            }
            Err(e) if e.message.starts_with("AUTHORIZATION_PENDING") && std::time::Instant::now() < deadline => {}
            Err(e) => return Err(e),
        }
    }
}

pub enum Action {
    List,
    Create { name: String, days: Option<u32> },
    Revoke { id: i64 },
}

pub async fn tokens(json: bool, action: Action) -> Result<(), CliError> {
    let client = Client::from_config()?;
    match action {
        Action::List => {
            let answer = client.get("/v1/auth/tokens").await?;
            print(json, &answer, |a| {
                let rows: Vec<Vec<String>> = a["tokens"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        let name = t["name"].as_str().unwrap_or("(a sign-in)").to_string();
                        let used = t["last_used_at"].as_str().unwrap_or("never").to_string();
                        vec![text(&t["id"]), name, text(&t["created_at"]), text(&t["expires_at"]), used]
                    })
                    .collect();
                table(&["ID", "NAME", "CREATED", "EXPIRES", "LAST USED"], &rows)
            });
        }
        Action::Create { name, days } => {
            let mut body = json!({"name": name});
            if let Some(days) = days {
                body["expires_in_days"] = json!(days);
            }
            let answer = client.post("/v1/auth/tokens", &body).await?;
            print(json, &answer, |a: &Value| {
                format!(
                    "token {} \"{}\" (expires {}); copy it now, it is not shown again:\n{}",
                    text(&a["id"]),
                    text(&a["name"]),
                    text(&a["expires_at"]),
                    text(&a["token"])
                )
            });
        }
        Action::Revoke { id } => {
            client.call(reqwest::Method::DELETE, &format!("/v1/auth/tokens/{id}"), None).await?;
            print(json, &json!({"revoked": id}), |_| format!("token {id} revoked"));
        }
    }
    Ok(())
}
