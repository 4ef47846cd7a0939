//! `jpu login --sso`: a device authorization grant (RFC 8628's shape,
//! api.md) of this site's own. The CLI starts here and polls here; the
//! person opens this site's page (`/auth/device`), which names the device,
//! the address that asked and when, and approves there by signing in at
//! the university in the browser — the same campus rules as a browser's
//! sign-in, and the approval bound to whoever signed in. The provider's
//! own device grant was used before: its link skipped our page, so a code
//! someone else started could be approved unawares (#42 D1).

use app::msg;
use sha2::{Digest, Sha256};
use std::time::Duration;

use app::model::views::NewToken;

use crate::auth::oidc::DeviceStart;
use crate::clock::{now_ms, rfc3339};
use crate::services::{ServiceError, Services};

/// How long a device sign-in waits for its approval.
const EXPIRES_S: u64 = 600;
/// Seconds between two polls.
const INTERVAL_S: u64 = 5;
/// The user code's letters: no vowels (no words), none that look alike.
const CODE_LETTERS: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";

fn oidc(state: &Services) -> Result<&crate::auth::oidc::Oidc, ServiceError> {
    state.oidc.as_deref().ok_or_else(|| ServiceError::NotFound(msg!("err-no-campus-sign-in")))
}

/// Where a device sign-in stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Waiting,
    /// Approved by this user (who signed in at the university for it).
    Approved(i64),
    Denied,
}

/// A device sign-in started here, as the page the person opens shows it:
/// what the device called itself, from which address, when.
#[derive(Debug, Clone)]
pub struct Requested {
    pub device: String,
    pub address: std::net::IpAddr,
    pub at_ms: i64,
    pub expires_ms: i64,
    pub answer: Answer,
    /// The device code's SHA-256 (the code itself is the CLI's secret).
    device_hash: [u8; 32],
}

/// The device sign-ins started and not expired, by user code (in memory:
/// a restart only means starting again).
#[derive(Debug, Default)]
pub struct DeviceRequests(std::sync::Mutex<std::collections::HashMap<String, Requested>>);

/// Device sign-ins remembered at once (each also held by the address
/// limit of `auth::starts`).
const MAX_REQUESTS: usize = 10_000;

impl DeviceRequests {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Requested>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// False when it holds [`MAX_REQUESTS`] live ones already, or the code
    /// is taken.
    fn insert(&self, user_code: String, requested: Requested, now_ms: i64) -> bool {
        let mut all = self.lock();
        all.retain(|_, r| r.expires_ms > now_ms);
        if all.len() >= MAX_REQUESTS || all.contains_key(&user_code) {
            return false;
        }
        all.insert(user_code, requested);
        true
    }

    pub fn get(&self, user_code: &str, now_ms: i64) -> Option<Requested> {
        self.lock().get(&normal_code(user_code)).filter(|r| r.expires_ms > now_ms).cloned()
    }

    /// Answers a waiting one; false when it is not waiting (any more).
    pub fn answer(&self, user_code: &str, answer: Answer, now_ms: i64) -> bool {
        let mut all = self.lock();
        match all.get_mut(&normal_code(user_code)).filter(|r| r.expires_ms > now_ms && r.answer == Answer::Waiting) {
            Some(r) => {
                r.answer = answer;
                true
            }
            None => false,
        }
    }

    /// The one the device code names; taken out once answered.
    fn poll(&self, device_code: &str, now_ms: i64) -> Option<Requested> {
        let hash: [u8; 32] = Sha256::digest(device_code.as_bytes()).into();
        let mut all = self.lock();
        let code = all.iter().find(|(_, r)| r.device_hash == hash && r.expires_ms > now_ms).map(|(c, _)| c.clone())?;
        let found = all.get(&code).cloned()?;
        if found.answer != Answer::Waiting {
            all.remove(&code);
        }
        Some(found)
    }
}

/// A user code as typed: upper case, the dash where it belongs.
pub fn normal_code(typed: &str) -> String {
    let letters: String = typed.chars().filter(|c| c.is_ascii_alphabetic()).map(|c| c.to_ascii_uppercase()).collect();
    if letters.len() == 8 {
        format!("{}-{}", &letters[..4], &letters[4..])
    } else {
        letters
    }
}

/// The CLI's secret for polling: 32 random bytes.
fn new_device_code() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn new_user_code() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    let letters: String = (0..8).map(|_| CODE_LETTERS[rng.gen_range(0..CODE_LETTERS.len())] as char).collect();
    normal_code(&letters)
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
/// minute per address). The person is sent to this site's page, which
/// tells them what asked and from where, and approves it there.
pub async fn start(
    state: &Services,
    client: std::net::IpAddr,
    device: Option<&str>,
) -> Result<DeviceStart, ServiceError> {
    oidc(state)?;
    if !state.sign_in_starts.allow(client, std::time::Instant::now()) {
        return Err(ServiceError::QueueLimit(msg!("err-too-many-starts")));
    }
    let device_code = new_device_code();
    let now = now_ms();
    let requested = Requested {
        device: device_name(device),
        address: client,
        at_ms: now,
        expires_ms: now.saturating_add(EXPIRES_S as i64 * 1000),
        answer: Answer::Waiting,
        device_hash: Sha256::digest(device_code.as_bytes()).into(),
    };
    // a code already taken (one in 2.5·10¹⁰) is drawn again, once
    let mut user_code = new_user_code();
    let mut stored = state.device_requests.insert(user_code.clone(), requested.clone(), now);
    if !stored {
        user_code = new_user_code();
        stored = state.device_requests.insert(user_code.clone(), requested, now);
    }
    // a full table is said, not shown later as an unknown code
    if !stored {
        return Err(ServiceError::QueueLimit(msg!("err-too-many-starts")));
    }
    let here = format!("{}/auth/device", state.settings.server.public_url.trim_end_matches('/'));
    let mut complete = url::Url::parse(&here).map_err(|e| ServiceError::Internal(format!("server.public_url: {e}")))?;
    complete.query_pairs_mut().append_pair("user_code", &user_code);
    Ok(DeviceStart {
        device_code,
        user_code,
        verification_uri: here,
        verification_uri_complete: Some(complete.to_string()),
        interval: INTERVAL_S,
        expires_in: EXPIRES_S,
    })
}

/// One poll: `AUTHORIZATION_PENDING` until the person has approved it on
/// this site's page, then a personal token (90 days) named after the
/// device as that page showed it.
pub async fn finish(state: &Services, client: std::net::IpAddr, device_code: &str) -> Result<NewToken, ServiceError> {
    oidc(state)?;
    if device_code.is_empty() || device_code.len() > 1024 {
        return Err(ServiceError::field("device_code", msg!("err-device-code-missing")));
    }
    let Some(requested) = state.device_requests.poll(device_code, now_ms()) else {
        return Err(ServiceError::field("device_code", msg!("err-device-expired")));
    };
    let user_id = match requested.answer {
        Answer::Waiting => return Err(ServiceError::AuthorizationPending(msg!("err-device-pending"))),
        Answer::Denied => return Err(ServiceError::Forbidden(msg!("err-device-denied"))),
        Answer::Approved(user_id) => user_id,
    };
    let name = format!("jpu login --sso on {}", requested.device);
    let ttl = Duration::from_secs(crate::services::account::PERSONAL_TOKEN_DAYS_DEFAULT as u64 * 86_400);
    let max = crate::services::account::MAX_NAMED_TOKENS;
    let kind = crate::auth::TokenKind { label: Some(&name), parent: None, max_named: Some(max), epoch: None };
    let issued = crate::auth::issue_labelled_token(&state.db, user_id, kind, ttl, now_ms())
        .await?
        .map_err(|_| ServiceError::Conflict(msg!("err-too-many-tokens", max = max)))?;
    state.sign_in_starts.finished(client);
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_read_one_way_however_typed() {
        assert_eq!(normal_code("bcdf-ghjk"), "BCDF-GHJK");
        assert_eq!(normal_code("BCDFGHJK"), "BCDF-GHJK");
        assert_eq!(normal_code(" bc df gh jk "), "BCDF-GHJK");
        let code = new_user_code();
        assert_eq!(code.len(), 9);
        assert!(code.chars().all(|c| c == '-' || CODE_LETTERS.contains(&(c as u8))), "{code}");
    }

    #[test]
    fn a_request_is_answered_once_and_polled_out_once() {
        let requests = DeviceRequests::default();
        let r = |code: &str| Requested {
            device: "laptop".into(),
            address: "127.0.0.1".parse().unwrap(),
            at_ms: 0,
            expires_ms: 1000,
            answer: Answer::Waiting,
            device_hash: Sha256::digest(code.as_bytes()).into(),
        };
        assert!(requests.insert("BCDF-GHJK".into(), r("secret"), 0));
        assert!(!requests.insert("BCDF-GHJK".into(), r("other"), 0), "a code is never given twice");
        assert_eq!(requests.poll("secret", 1).map(|r| r.answer), Some(Answer::Waiting));
        assert_eq!(requests.poll("wrong", 1).map(|r| r.answer), None);
        assert!(requests.answer("bcdfghjk", Answer::Approved(7), 1));
        assert!(!requests.answer("BCDF-GHJK", Answer::Denied, 1), "answered already");
        assert_eq!(requests.poll("secret", 2).map(|r| r.answer), Some(Answer::Approved(7)));
        assert_eq!(requests.poll("secret", 3).map(|r| r.answer), None, "a token is made once");
        assert!(requests.insert("CDFG-HJKL".into(), r("late"), 0));
        assert_eq!(requests.poll("late", 1000).map(|r| r.answer), None, "expired");
    }
}
