//! `jpu login --sso`: the OAuth 2.0 device authorization grant (RFC 8628)
//! brokered by the server with its own client (api.md). The CLI never
//! holds the client secret: it starts here, shows the person the
//! provider's page and code, and polls here; once the person has signed
//! in at the provider, the same campus rules as the browser's sign-in
//! apply and the CLI gets a personal token named after the device. The
//! person opens this site's page first ([`Requested`]): it names the
//! device and the address that asked before sending them on.

use app::msg;
use std::time::Duration;

use app::model::views::NewToken;

use crate::auth::oidc::{DevicePoll, DeviceStart, OidcError};
use crate::clock::{now_ms, rfc3339};
use crate::services::campus::{self, CampusError};
use crate::services::{ServiceError, Services};

fn oidc(state: &Services) -> Result<&crate::auth::oidc::Oidc, ServiceError> {
    state.oidc.as_deref().ok_or_else(|| ServiceError::NotFound(msg!("err-no-campus-sign-in")))
}

fn provider_error(e: OidcError) -> ServiceError {
    match e {
        OidcError::Rejected(why) => ServiceError::Forbidden(msg!("err-provider-rejected", why = why)),
        other => ServiceError::Internal(other.to_string()),
    }
}

/// A device sign-in started here, as the page the person opens first
/// shows it: what the device called itself, from which address, when.
#[derive(Debug, Clone)]
pub struct Requested {
    pub device: String,
    pub address: std::net::IpAddr,
    pub at_ms: i64,
    pub expires_ms: i64,
    /// Where the person goes on to sign in at the provider.
    pub provider_uri: String,
}

/// The device sign-ins started and not expired, by user code (in memory:
/// a restart only means starting again).
#[derive(Debug, Default)]
pub struct DeviceRequests(std::sync::Mutex<std::collections::HashMap<String, Requested>>);

/// Device sign-ins remembered at once (each also held by the address
/// limit of `auth::starts`).
const MAX_REQUESTS: usize = 10_000;

impl DeviceRequests {
    /// False when it holds [`MAX_REQUESTS`] live ones already.
    fn insert(&self, user_code: String, requested: Requested, now_ms: i64) -> bool {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|_, r| r.expires_ms > now_ms);
        if all.len() >= MAX_REQUESTS {
            return false;
        }
        all.insert(user_code, requested);
        true
    }

    pub fn get(&self, user_code: &str, now_ms: i64) -> Option<Requested> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).get(user_code).filter(|r| r.expires_ms > now_ms).cloned()
    }
}

/// What a device calls itself, as a token's name and the approval page
/// show it: a host name's characters (letters, digits, `.`, `_`, `-`),
/// at most 40 — no quotes, look-alikes or separators that could make the
/// page's sentence say something else.
fn device_name(device: Option<&str>) -> String {
    device
        .map(|d| d.chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).take(40).collect())
        .filter(|d: &String| !d.is_empty())
        .unwrap_or_else(|| "a device".into())
}

/// Starts a device sign-in for `client` (at most `auth::starts`' number a
/// minute per address). The person is sent to this site's page first,
/// which tells them what asked and from where before they approve it at
/// the provider (#42 D1: the provider's page names neither, so a code
/// someone else started could be approved unawares).
pub async fn start(
    state: &Services,
    client: std::net::IpAddr,
    device: Option<&str>,
) -> Result<DeviceStart, ServiceError> {
    let oidc = oidc(state)?;
    if !state.sign_in_starts.allow(client, std::time::Instant::now()) {
        return Err(ServiceError::QueueLimit(msg!("err-too-many-starts")));
    }
    let mut started = oidc.device_start().await.map_err(provider_error)?;
    let now = now_ms();
    let provider_uri = started.verification_uri_complete.clone().unwrap_or_else(|| started.verification_uri.clone());
    let requested = Requested {
        device: device_name(device),
        address: client,
        at_ms: now,
        expires_ms: now.saturating_add(started.expires_in.saturating_mul(1000) as i64),
        provider_uri,
    };
    // a full table is said, not shown later as an unknown code
    if !state.device_requests.insert(started.user_code.clone(), requested, now) {
        return Err(ServiceError::QueueLimit(msg!("err-too-many-starts")));
    }
    let here = format!("{}/auth/device", state.settings.server.public_url.trim_end_matches('/'));
    let mut complete = url::Url::parse(&here).map_err(|e| ServiceError::Internal(format!("server.public_url: {e}")))?;
    complete.query_pairs_mut().append_pair("user_code", &started.user_code);
    started.verification_uri = here;
    started.verification_uri_complete = Some(complete.to_string());
    Ok(started)
}

/// One poll: `AUTHORIZATION_PENDING` until the person has signed in at
/// the provider, then a personal token (90 days) named after `device`.
pub async fn finish(
    state: &Services,
    client: std::net::IpAddr,
    device_code: &str,
    device: Option<&str>,
) -> Result<NewToken, ServiceError> {
    let oidc = oidc(state)?;
    if device_code.is_empty() || device_code.len() > 1024 {
        return Err(ServiceError::field("device_code", msg!("err-device-code-missing")));
    }
    let identity = match oidc.device_poll(device_code).await.map_err(provider_error)? {
        DevicePoll::Pending => return Err(ServiceError::AuthorizationPending(msg!("err-device-pending"))),
        DevicePoll::Expired => return Err(ServiceError::field("device_code", msg!("err-device-expired"))),
        DevicePoll::Denied => return Err(ServiceError::Forbidden(msg!("err-device-denied"))),
        DevicePoll::Done(identity) => identity,
    };
    let user = match campus::sign_in(state, &identity).await {
        Ok(user) => user,
        Err(CampusError::Refused(why)) => return Err(ServiceError::Forbidden(why.message())),
        Err(CampusError::Directory(e)) => return Err(ServiceError::Internal(format!("directory: {e}"))),
        Err(CampusError::Service(e)) => return Err(e),
    };
    let name = format!("jpu login --sso on {}", device_name(device));
    let ttl = Duration::from_secs(crate::services::account::PERSONAL_TOKEN_DAYS_DEFAULT as u64 * 86_400);
    let max = crate::services::account::MAX_NAMED_TOKENS;
    let kind = crate::auth::TokenKind { label: Some(&name), parent: None, max_named: Some(max), epoch: None };
    let issued = crate::auth::issue_labelled_token(&state.db, user.id, kind, ttl, now_ms())
        .await?
        .map_err(|_| ServiceError::Conflict(msg!("err-too-many-tokens", max = max)))?;
    state.sign_in_starts.finished(client);
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}
