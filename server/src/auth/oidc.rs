//! Sign-in through the university's OpenID Provider (api.md): the
//! authorization code flow with PKCE (S256), `state` and `nonce`, through
//! the `openidconnect` crate. What this module owns is the protocol: the
//! provider's discovery document and keys (fetched, kept for
//! [`METADATA_TTL`], fetched again at once when a token names a key we do
//! not have: the provider rotated), the redirect to it, and the checks of
//! its answer (signature, `iss`, `aud`, `exp`, `nonce`, all by the crate).
//! Who may then sign in, with which lab and role, is the services' call
//! (`services::campus`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreClaimName, CoreClaimType, CoreClient, CoreClientAuthMethod, CoreGenderClaim,
    CoreGrantType, CoreIdTokenVerifier, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm, CoreJwsSigningAlgorithm, CoreResponseMode, CoreResponseType,
    CoreSubjectIdentifierType,
};
use openidconnect::{
    AdditionalClaims, AdditionalProviderMetadata, AuthenticationFlow, AuthorizationCode, ClaimsVerificationError,
    ClientId, ClientSecret, CsrfToken, DeviceAuthorizationUrl, EndpointMaybeSet, EndpointNotSet, EndpointSet, IdToken,
    IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, ProviderMetadata, RedirectUrl, Scope,
    SignatureVerificationError, TokenResponse,
};
use serde::{Deserialize, Serialize};

use crate::config::OidcSettings;

/// How long the provider's metadata and keys are trusted before they are
/// fetched again (a token signed with an unknown key fetches them at once).
pub const METADATA_TTL: Duration = Duration::from_secs(600);
/// Longest a sign-in may take at the provider before its state expires.
pub const PENDING_TTL_MS: i64 = 10 * 60 * 1000;

type Client =
    CoreClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointMaybeSet, EndpointMaybeSet>;

/// The provider's metadata with its device authorization endpoint (RFC
/// 8628), when it has one.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct DeviceEndpoint {
    device_authorization_endpoint: Option<DeviceAuthorizationUrl>,
}
impl AdditionalProviderMetadata for DeviceEndpoint {}
type Metadata = ProviderMetadata<
    DeviceEndpoint,
    CoreAuthDisplay,
    CoreClientAuthMethod,
    CoreClaimName,
    CoreClaimType,
    CoreGrantType,
    CoreJweContentEncryptionAlgorithm,
    CoreJweKeyManagementAlgorithm,
    CoreJsonWebKey,
    CoreResponseMode,
    CoreResponseType,
    CoreSubjectIdentifierType,
>;

/// What the CLI shows the person, and polls with (api.md).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct DeviceStart {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    pub verification_uri_complete: Option<String>,
    pub interval: u64,
    pub expires_in: u64,
}

/// Every claim of the ID token, by name (the username and groups claims
/// are settings).
#[derive(Debug, Clone, Deserialize, Serialize)]
struct AllClaims {
    #[serde(flatten)]
    all: HashMap<String, serde_json::Value>,
}
impl AdditionalClaims for AllClaims {}
type OurIdToken = IdToken<AllClaims, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;

/// What a browser's sign-in carries from the redirect to the callback
/// (kept in its session: a callback from another browser finds none).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pending {
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// A path on this site to land on.
    pub next: String,
    pub started_ms: i64,
    /// The user code of the device sign-in this one approves.
    #[serde(default)]
    pub device: Option<String>,
}

/// Who the provider says signed in.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The provider (its checked `iss`) and the person there (`sub`): what
    /// an account is keyed on. The username is only what to call a new one.
    pub issuer: String,
    pub subject: String,
    pub username: String,
    pub groups: Vec<String>,
    /// The provider's refresh token, when it gave one: what the re-check
    /// asks it with later (`services::campus::offboarding`).
    pub grant: Option<Grant>,
}

/// A refresh token: a credential, never printed.
#[derive(Clone, PartialEq)]
pub struct Grant(String);

impl Grant {
    pub fn new(token: String) -> Self {
        Grant(token)
    }
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Grant(…)")
    }
}

/// What the provider says of a grant when it is asked again.
#[derive(Debug, PartialEq)]
pub enum Recheck {
    /// It still vouches: whom its new ID token names (if it sent one), and
    /// the grant to keep (a provider may rotate it).
    Vouched { identity: Option<Identity>, grant: Option<Grant> },
    /// It refused the grant (`invalid_grant`): the person is gone there,
    /// or their grant was revoked.
    Ended(String),
}

#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The provider cannot be reached or answered nonsense (our side: 502).
    #[error("the university's sign-in service cannot be reached: {0}")]
    Provider(String),
    /// The callback failed a check (the browser's side: 400).
    #[error("{0}")]
    Rejected(String),
    #[error("OIDC is misconfigured: {0}")]
    Config(String),
}

/// Why an ID token was not accepted.
#[derive(Debug, PartialEq)]
enum Unverified {
    /// Signed with a key not in the keys we have.
    UnknownKey,
    Failed(String),
}

pub struct Oidc {
    settings: OidcSettings,
    client_secret: Option<String>,
    redirect: RedirectUrl,
    http: reqwest::Client,
    /// `lab_group`, compiled once (checked at start-up).
    lab_group: regex::Regex,
    cached: Mutex<Option<(Instant, Client, Option<DeviceAuthorizationUrl>)>>,
}

impl Oidc {
    /// The provider's client, or `None` when no issuer is set. The secret
    /// file is read once here; the provider is first asked at sign-in.
    pub fn from_settings(settings: &OidcSettings, public_url: &str) -> Result<Option<Self>, OidcError> {
        if settings.issuer.trim().is_empty() {
            return Ok(None);
        }
        let config = |m: String| OidcError::Config(m);
        if public_url.trim().is_empty() {
            return Err(config("server.public_url must be set: it makes the redirect URI".into()));
        }
        if settings.client_id.is_empty() {
            return Err(config("auth.oidc.client_id is empty".into()));
        }
        IssuerUrl::new(settings.issuer.clone()).map_err(|e| config(format!("auth.oidc.issuer: {e}")))?;
        let lab_group = lab_pattern(&settings.lab_group)?;
        let client_secret = match &settings.client_secret_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| config(format!("auth.oidc.client_secret_file {}: {e}", path.display())))?
                    .trim()
                    .to_string(),
            ),
            None => None,
        };
        let redirect = RedirectUrl::new(format!("{}/auth/oidc/callback", public_url.trim_end_matches('/')))
            .map_err(|e| config(format!("server.public_url: {e}")))?;
        let http = reqwest::Client::builder()
            // a provider's redirect is never followed (SSRF)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| config(format!("HTTP client: {e}")))?;
        Ok(Some(Self {
            settings: settings.clone(),
            client_secret,
            redirect,
            http,
            lab_group,
            cached: Mutex::new(None),
        }))
    }

    pub fn settings(&self) -> &OidcSettings {
        &self.settings
    }

    pub fn lab_group(&self) -> &regex::Regex {
        &self.lab_group
    }

    /// The provider's client from its discovery document and keys, cached.
    async fn client(&self, fresh: bool) -> Result<Client, OidcError> {
        if !fresh {
            let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, client, _)) = cached.as_ref().filter(|(at, _, _)| at.elapsed() < METADATA_TTL) {
                return Ok(client.clone());
            }
        }
        let issuer = IssuerUrl::new(self.settings.issuer.clone()).map_err(|e| OidcError::Config(e.to_string()))?;
        let metadata = Metadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| OidcError::Provider(format!("discovery: {}", chain(&e))))?;
        let device = metadata.additional_metadata().device_authorization_endpoint.clone();
        let client = CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            self.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone());
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), client.clone(), device));
        Ok(client)
    }

    /// Whether the provider answers (its discovery document, cached as
    /// for sign-ins): `/healthz` names it when it does not.
    pub async fn reachable(&self) -> Result<(), String> {
        self.client(false).await.map(|_| ()).map_err(|e| e.to_string())
    }

    /// The provider's sign-in URL for this browser, and what its session
    /// must keep until the callback.
    /// The origin of the provider's authorization endpoint (where a sign-in
    /// redirects the browser: a form that starts one must be let go there).
    pub async fn authorize_origin(&self) -> Option<String> {
        let client = self.client(false).await.ok()?;
        Some(client.auth_uri().url().origin().ascii_serialization())
    }

    /// `device`: the user code of a device sign-in this sign-in approves;
    /// the provider is then asked to have the person sign in anew
    /// (`prompt=login`): an approval is never given by a session alone.
    pub async fn begin(&self, next: &str, device: Option<&str>, now_ms: i64) -> Result<(String, Pending), OidcError> {
        let client = self.client(false).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for scope in self.settings.scopes.iter().filter(|s| s.as_str() != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        if device.is_some() {
            request = request.add_prompt(CoreAuthPrompt::Login);
        }
        let (url, state, nonce) = request.url();
        let pending = Pending {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
            next: safe_next(next),
            started_ms: now_ms,
            device: device.map(str::to_string),
        };
        Ok((url.to_string(), pending))
    }

    /// Checks the provider's answer against what this browser started
    /// (`state`), redeems the code (with the PKCE verifier) and checks the
    /// ID token (signature, issuer, audience, expiry, nonce).
    pub async fn finish(&self, pending: &Pending, code: &str, state: &str, now_ms: i64) -> Result<Identity, OidcError> {
        if !constant_time_eq(pending.state.as_bytes(), state.as_bytes()) {
            return Err(OidcError::Rejected("the sign-in's state does not match this browser's".into()));
        }
        if now_ms - pending.started_ms > PENDING_TTL_MS {
            return Err(OidcError::Rejected("this sign-in took too long; start again".into()));
        }
        let client = self.client(false).await?;
        let response = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| OidcError::Provider(format!("token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(pending.pkce_verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| OidcError::Rejected(format!("the provider refused the code: {}", chain(&e))))?;
        let jwt =
            response.id_token().ok_or_else(|| OidcError::Rejected("the provider sent no ID token".into()))?.to_string();
        let mut identity = self.identity_from(&client, &jwt, Some(pending.nonce.as_str())).await?;
        identity.grant = OAuth2TokenResponse::refresh_token(&response).map(|t| Grant::new(t.secret().clone()));
        Ok(identity)
    }

    /// Asks the provider about a grant again (the refresh-token grant): a
    /// person it dropped, or whose grant it revoked, is refused there
    /// (#42 I3); one it still vouches for comes back with today's groups.
    pub async fn recheck(&self, grant: &Grant) -> Result<Recheck, OidcError> {
        let client = self.client(false).await?;
        let form = [("grant_type", "refresh_token"), ("refresh_token", grant.secret())];
        let body = self.token_endpoint(&client, &form).await?;
        match body["error"].as_str() {
            Some("invalid_grant") => {
                let why = body["error_description"].as_str().unwrap_or("invalid_grant");
                return Ok(Recheck::Ended(why.chars().take(200).collect()));
            }
            Some(other) => return Err(OidcError::Provider(format!("token endpoint: {other}"))),
            None => {}
        }
        let identity = match body["id_token"].as_str() {
            Some(jwt) => Some(self.identity_from(&client, jwt, None).await?),
            None => None,
        };
        let grant = body["refresh_token"].as_str().map(|t| Grant::new(t.to_string()));
        Ok(Recheck::Vouched { identity, grant })
    }

    /// One form POST to the provider's token endpoint as this client; its
    /// JSON answer, errors included (RFC 6749 §5.2).
    async fn token_endpoint(&self, client: &Client, form: &[(&str, &str)]) -> Result<serde_json::Value, OidcError> {
        let token_url = client
            .token_uri()
            .ok_or_else(|| OidcError::Provider("the provider has no token endpoint".into()))?
            .url()
            .clone();
        let answer = self
            .http
            .post(token_url)
            .basic_auth(form_encode(&self.settings.client_id), self.client_secret.as_deref().map(form_encode))
            .form(form)
            .send()
            .await
            .map_err(|e| OidcError::Provider(format!("token endpoint: {}", chain(&e))))?;
        answer.json().await.map_err(|e| OidcError::Provider(format!("token endpoint: {}", chain(&e))))
    }

    /// Who an ID token names, once it passed every check. A key we do not
    /// know may be one the provider rotated in since we fetched its keys:
    /// they are fetched once more before the token is refused.
    async fn identity_from(&self, client: &Client, jwt: &str, nonce: Option<&str>) -> Result<Identity, OidcError> {
        let claims = match check_id_token(&client.id_token_verifier(), jwt, nonce) {
            Err(Unverified::UnknownKey) => check_id_token(&self.client(true).await?.id_token_verifier(), jwt, nonce),
            other => other,
        };
        let claims = claims.map_err(|e| match e {
            Unverified::UnknownKey => {
                OidcError::Rejected("the ID token is signed with a key the provider does not publish".into())
            }
            Unverified::Failed(why) => OidcError::Rejected(why),
        })?;
        self.identity(claims)
    }

    fn identity(&self, claims: HashMap<String, serde_json::Value>) -> Result<Identity, OidcError> {
        let claim = &self.settings.username_claim;
        let username = claims
            .get(claim)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| OidcError::Rejected(format!("the provider's answer names no user (claim `{claim}`)")))?;
        let groups = match claims.get(&self.settings.groups_claim) {
            Some(serde_json::Value::Array(items)) => {
                items.iter().filter_map(|g| g.as_str().map(str::to_string)).collect()
            }
            Some(serde_json::Value::String(one)) => vec![one.clone()],
            _ => Vec::new(),
        };
        let text = |name: &str| claims.get(name).and_then(|v| v.as_str()).map(str::to_string);
        let subject = text("sub")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| OidcError::Rejected("the provider's answer names no subject (`sub`)".into()))?;
        // the token's `iss` was checked to be the configured issuer; that one
        // string keys accounts here and in an admin's link (no two spellings)
        let issuer = self.settings.issuer.clone();
        Ok(Identity { issuer, subject, username, groups, grant: None })
    }
}

/// The ID token's claims once every check passed (signature by a key the
/// provider publishes, algorithm, issuer, audience, expiry, nonce).
fn check_id_token(
    verifier: &CoreIdTokenVerifier,
    jwt: &str,
    nonce: Option<&str>,
) -> Result<HashMap<String, serde_json::Value>, Unverified> {
    let token: OurIdToken = jwt.parse().map_err(|e| Unverified::Failed(format!("the ID token does not parse: {e}")))?;
    let expected = nonce.map(|n| Nonce::new(n.to_string()));
    // a device sign-in carries no nonce; a browser's must match its own
    let check_nonce = |got: Option<&Nonce>| match (&expected, got) {
        (None, _) => Ok(()),
        (Some(want), Some(got)) if want.secret() == got.secret() => Ok(()),
        _ => Err("the nonce does not match this browser's".to_string()),
    };
    let claims = token.claims(verifier, check_nonce).map_err(|e| match e {
        ClaimsVerificationError::SignatureVerification(SignatureVerificationError::NoMatchingKey) => {
            Unverified::UnknownKey
        }
        e => Unverified::Failed(format!("the ID token failed its check: {}", chain(&e))),
    })?;
    let mut all = claims.additional_claims().all.clone();
    if let Some(name) = claims.preferred_username() {
        all.entry("preferred_username".into()).or_insert_with(|| serde_json::json!(name.as_str()));
    }
    if let Some(email) = claims.email() {
        all.entry("email".into()).or_insert_with(|| serde_json::json!(email.as_str()));
    }
    all.insert("sub".into(), serde_json::json!(claims.subject().as_str()));
    Ok(all)
}

/// RFC 6749 §2.3.1: client id and secret are form-encoded before HTTP
/// Basic authentication.
fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The lab-group pattern: a regex with exactly one capture group.
pub fn lab_pattern(pattern: &str) -> Result<regex::Regex, OidcError> {
    let re = regex::Regex::new(pattern).map_err(|e| OidcError::Config(format!("lab_group: {e}")))?;
    if re.captures_len() != 2 {
        return Err(OidcError::Config(format!("lab_group `{pattern}` must have exactly one capture group")));
    }
    Ok(re)
}

/// `next` when it is a path on this site, else `/`: never another host
/// (`//evil.example`, `/\evil.example`, `https://…`).
pub fn safe_next(next: &str) -> String {
    let ok = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        // a control character is dropped by browsers (`/\t/evil` is
        // `//evil` to them) and a non-ASCII one is no header value
        && next.chars().all(|c| c.is_ascii_graphic() && c != '\\')
        && next.len() <= 2048;
    if ok {
        next.to_string()
    } else {
        "/".to_string()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An error with its causes, for messages and logs.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[cfg(test)]
#[path = "oidc_tokens_tests.rs"]
mod tokens_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        for (given, kept) in [
            ("/jobs/7", "/jobs/7"),
            ("/queue?x=1", "/queue?x=1"),
            ("//evil.example", "/"),
            ("/\\evil.example", "/"),
            ("https://evil.example", "/"),
            ("evil.example", "/"),
            ("", "/"),
            ("/a\r\nSet-Cookie: x", "/"),
        ] {
            assert_eq!(safe_next(given), kept, "{given:?}");
        }
    }

    #[test]
    fn the_lab_pattern_needs_exactly_one_capture_group() {
        assert!(lab_pattern("^gpu-lab-(.+)$").is_ok());
        assert!(lab_pattern("^gpu-lab-.+$").is_err());
        assert!(lab_pattern("^(gpu)-lab-(.+)$").is_err());
        assert!(lab_pattern("^gpu-lab-(").is_err());
    }
}
