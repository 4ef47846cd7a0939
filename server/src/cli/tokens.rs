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
