//! `jpu notify`: the caller's notification settings (changed field by
//! field) and their latest deliveries.

use serde_json::{json, Value};

use super::client::{CliError, Client};
use super::render::{print, table, text};

pub struct NotifyArgs {
    /// An address, or "" to stop e-mail.
    pub email: Option<String>,
    /// A URL, or "" to remove the webhook.
    pub webhook: Option<String>,
    /// Comma-separated events, or "" for none.
    pub events: Option<String>,
}

fn settings_text(s: &Value) -> String {
    let events: Vec<String> = s["events"].as_array().into_iter().flatten().map(text).collect();
    let mut out = format!(
        "e-mail:  {}\nwebhook: {}\nevents:  {}\n",
        text(&s["email"]),
        text(&s["webhook_url"]),
        if events.is_empty() { "none".to_string() } else { events.join(", ") }
    );
    if let Some(secret) = s["webhook_secret"].as_str() {
        out.push_str(&format!(
            "\nthe webhook's signing secret (shown this once; each delivery carries\n\
             X-JPU-Signature: sha256=<HMAC-SHA256 of the body with it>):\n{secret}\n"
        ));
    }
    out
}

/// Shows the settings, or changes the fields given and shows the result.
pub async fn notify(json: bool, args: NotifyArgs) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let mut settings = client.get("/v1/me/notifications").await?;
    if args.email.is_none() && args.webhook.is_none() && args.events.is_none() {
        print(json, &settings, settings_text);
        return Ok(());
    }
    let blank_is_null = |v: String| if v.trim().is_empty() { Value::Null } else { json!(v) };
    if let Some(email) = args.email {
        settings["email"] = blank_is_null(email);
    }
    if let Some(url) = args.webhook {
        settings["webhook_url"] = blank_is_null(url);
    }
    if let Some(events) = args.events {
        let list: Vec<&str> = events.split(',').map(str::trim).filter(|e| !e.is_empty()).collect();
        settings["events"] = json!(list);
    }
    let body =
        json!({"email": settings["email"], "webhook_url": settings["webhook_url"], "events": settings["events"]});
    let saved = client.call(reqwest::Method::PUT, "/v1/me/notifications", Some(&body)).await?;
    print(json, &saved, settings_text);
    Ok(())
}

pub async fn deliveries(json: bool) -> Result<(), CliError> {
    let client = Client::from_config()?;
    let list = client.get("/v1/me/notifications/deliveries").await?;
    print(json, &list, |l| {
        let rows: Vec<Vec<String>> = l["deliveries"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                vec![
                    text(&d["id"]),
                    text(&d["job"]),
                    text(&d["event"]),
                    format!("{} {}", text(&d["channel"]), text(&d["target"])),
                    text(&d["state"]),
                    text(&d["attempts"]),
                    text(&d["last_error"]),
                ]
            })
            .collect();
        table(&["ID", "JOB", "EVENT", "TO", "STATE", "TRIES", "PROBLEM"], &rows)
    });
    Ok(())
}
