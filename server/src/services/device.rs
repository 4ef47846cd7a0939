//! `jpu login --sso`: the OAuth 2.0 device authorization grant (RFC 8628)
//! brokered by the server with its own client (api.md). The CLI never
//! holds the client secret: it starts here, shows the person the
//! provider's page and code, and polls here; once the person has signed
//! in at the provider, the same campus rules as the browser's sign-in
//! apply and the CLI gets a personal token named after the device.

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

pub async fn start(state: &Services) -> Result<DeviceStart, ServiceError> {
    oidc(state)?.device_start().await.map_err(provider_error)
}

/// One poll: `AUTHORIZATION_PENDING` until the person has signed in at
/// the provider, then a personal token (90 days) named after `device`.
pub async fn finish(state: &Services, device_code: &str, device: Option<&str>) -> Result<NewToken, ServiceError> {
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
    let device: String = device
        .map(|d| d.chars().filter(|c| !c.is_control()).take(40).collect())
        .filter(|d: &String| !d.trim().is_empty())
        .unwrap_or_else(|| "a device".into());
    let name = format!("jpu login --sso on {}", device.trim());
    let ttl = Duration::from_secs(crate::services::account::PERSONAL_TOKEN_DAYS_DEFAULT as u64 * 86_400);
    let max = crate::services::account::MAX_NAMED_TOKENS;
    let kind = crate::auth::TokenKind { label: Some(&name), parent: None, max_named: Some(max) };
    let issued = crate::auth::issue_labelled_token(&state.db, user.id, kind, ttl, now_ms())
        .await?
        .map_err(|_| ServiceError::Conflict(msg!("err-too-many-tokens", max = max)))?;
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}
