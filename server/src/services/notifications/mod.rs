//! Notifications (api.md "Notifications and reports"): each user's
//! settings — an e-mail address, a webhook URL, which events — and the
//! list of their deliveries. Events are written to the outbox by the
//! database itself, in the transaction that changes the job (see the
//! migration); [`deliver`] sends them; [`targets`] says where a webhook
//! may go; [`send`] signs and sends.

pub mod deliver;
pub mod send;
pub mod targets;

use app::model::views::{Deliveries, NotificationSettings};
use app::msg;
use rand::Rng;

use crate::auth::Caller;
use crate::clock::now_ms;
use crate::db;
use crate::db::notifications::SettingsRow;
use crate::services::{ServiceError, Services};

pub const EVENTS: &[&str] = &["started", "ended", "retried"];
/// Deliveries the list shows.
pub const DELIVERIES_SHOWN: i64 = 100;
/// The longest e-mail address (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;

/// `PUT /v1/me/notifications`: the whole of a user's settings.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsBody {
    /// Where e-mail goes; null = no e-mail.
    #[serde(default)]
    #[schema(max_length = 254)]
    pub email: Option<String>,
    /// An http(s) URL each event is POSTed to, signed; null = none.
    #[serde(default)]
    #[schema(max_length = 2048)]
    pub webhook_url: Option<String>,
    /// Of `started`, `ended`, `retried`; default all three.
    #[serde(default = "all_events")]
    pub events: Vec<String>,
}

fn all_events() -> Vec<String> {
    EVENTS.iter().map(|e| e.to_string()).collect()
}

pub async fn get(state: &Services, caller: &Caller) -> Result<NotificationSettings, ServiceError> {
    let row = db::notifications::settings(&mut state.db.acquire().await?, caller.user.id).await?;
    Ok(match row {
        Some(r) => {
            NotificationSettings { email: r.email, webhook_url: r.webhook_url, events: r.events, webhook_secret: None }
        }
        None => NotificationSettings { email: None, webhook_url: None, events: all_events(), webhook_secret: None },
    })
}

/// Replaces the caller's settings. A new webhook URL gets a new signing
/// secret, answered this once; the same URL keeps its secret.
pub async fn put(state: &Services, caller: &Caller, body: SettingsBody) -> Result<NotificationSettings, ServiceError> {
    let events = check_events(body.events)?;
    let email = match body.email.map(|e| e.trim().to_string()).filter(|e| !e.is_empty()) {
        None => None,
        Some(e) => Some(check_email(state, e)?),
    };
    let webhook_url = match body.webhook_url.map(|u| u.trim().to_string()).filter(|u| !u.is_empty()) {
        None => None,
        Some(u) => {
            let target = targets::parse(&u).map_err(|m| ServiceError::field("webhook_url", m))?;
            let allow = targets::AllowList::new(&state.settings.notify.webhook_allow);
            targets::resolve(&target, &allow).await.map_err(|m| ServiceError::field("webhook_url", m))?;
            Some(target.url.to_string())
        }
    };
    let mut tx = db::write_tx(&state.db).await?;
    let old = db::notifications::settings(&mut tx, caller.user.id).await?;
    let kept = old.filter(|o| o.webhook_url.is_some() && o.webhook_url == webhook_url).and_then(|o| o.webhook_secret);
    let fresh = webhook_url.is_some() && kept.is_none();
    let secret = match (&webhook_url, kept) {
        (None, _) => None,
        (Some(_), Some(kept)) => Some(kept),
        (Some(_), None) => Some(new_secret()),
    };
    let row = SettingsRow { email, webhook_url, webhook_secret: secret.clone(), events };
    db::notifications::put_settings(&mut tx, caller.user.id, &row, now_ms()).await?;
    tx.commit().await?;
    Ok(NotificationSettings {
        email: row.email,
        webhook_url: row.webhook_url,
        events: row.events,
        webhook_secret: if fresh { secret } else { None },
    })
}

pub async fn deliveries(state: &Services, caller: &Caller) -> Result<Deliveries, ServiceError> {
    let list = db::notifications::deliveries(&mut state.db.acquire().await?, caller.user.id, DELIVERIES_SHOWN).await?;
    Ok(Deliveries { deliveries: list })
}

/// 32 random bytes as hex.
fn new_secret() -> String {
    let bytes: [u8; 32] = rand::thread_rng().gen();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_events(events: Vec<String>) -> Result<Vec<String>, ServiceError> {
    let mut out: Vec<String> = Vec::new();
    for e in events {
        if !EVENTS.contains(&e.as_str()) {
            return Err(ServiceError::field("events", msg!("err-one-of", text = e, options = EVENTS.join(", "))));
        }
        if out.contains(&e) {
            return Err(ServiceError::field("events", msg!("err-listed-twice", text = e)));
        }
        out.push(e);
    }
    Ok(out)
}

fn check_email(state: &Services, email: String) -> Result<String, ServiceError> {
    if state.settings.notify.smtp_url.trim().is_empty() {
        return Err(ServiceError::field("email", msg!("err-no-smtp")));
    }
    if email.chars().count() > MAX_EMAIL_CHARS {
        return Err(ServiceError::field("email", msg!("err-chars-max", max = MAX_EMAIL_CHARS)));
    }
    email
        .parse::<lettre::Address>()
        .map_err(|e| ServiceError::field("email", msg!("err-not-email", text = &email, why = e.to_string())))?;
    Ok(email)
}
