//! Who is calling: password sign-in (argon2id, throttled), API tokens, and
//! resolving a bearer token or console session to a [`Caller`].

pub mod directory;
pub mod oidc;
pub mod password;
pub mod starts;
pub mod throttle;
pub mod token;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::db::Pool;

use crate::db::accounts::{self, UserRecord};
pub use password::PasswordError;
pub use throttle::LoginThrottle;

/// The authenticated principal of a request (defined beside the console's
/// backend trait, so the console hands it to the backend typed).
pub use app::api::principal::Caller;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{}", app::msg!("err-wrong-password"))]
    InvalidCredentials,
    #[error("{}", app::msg!("err-too-many-attempts", secs = .0.as_secs().max(1)))]
    Throttled(Duration),
    /// The password was right, but an admin disabled the account.
    #[error("{}", app::msg!("err-account-disabled"))]
    Disabled,
    /// `auth.passwords` is off and this is not a local account; the
    /// button to use instead is named.
    #[error("{}", app::msg!("err-passwords-off", button = .0))]
    PasswordsOff(String),
    /// The directory knows the password but does not let the person in
    /// (no lab group, a system uid, …): why.
    #[error("{0}")]
    Refused(app::i18n::Msg),
    /// The directory cannot be asked (or would get the password in clear).
    #[error("{0}")]
    Directory(String),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Who may sign in with a password (`auth.passwords`).
#[derive(Debug, Clone, PartialEq)]
pub enum Passwords {
    Everyone,
    /// Only local accounts; the others are told to use this button.
    LocalOnly {
        button: String,
    },
}

/// Checks a username and password from `client` (the sign-in slow-down
/// is per username and address). Unknown users and wrong passwords take
/// the same path and the same time. With passwords for local accounts
/// only, anyone else (unknown users too) is refused before any check: a
/// guess at them tells nothing but that the name is not a local account.
pub async fn authenticate(
    db: &Pool,
    throttle: &LoginThrottle,
    passwords: &Passwords,
    username: &str,
    password: &str,
    client: IpAddr,
) -> Result<UserRecord, AuthError> {
    let user = accounts::user_by_username(&mut db.acquire().await?, username).await?;
    if let Passwords::LocalOnly { button } = passwords {
        if !user.as_ref().is_some_and(|u| u.local) {
            return Err(AuthError::PasswordsOff(button.clone()));
        }
    }
    let attempt = throttle.begin(username, client, Instant::now()).map_err(AuthError::Throttled)?;
    let stored = user.as_ref().map(|u| u.password_hash.clone());
    // a flood of guesses (at other names, from anywhere) must not keep
    // out the users nobody is guessing at
    let lane = if user.is_some() && throttle.is_clean(username, client, Instant::now()) {
        password::Lane::Trusted
    } else {
        password::Lane::Open
    };
    let verified = match password::verify_password(lane, stored, password.to_string()).await {
        Ok(verified) => verified,
        Err(e) => {
            // not checked (the server was busy): neither failure nor success
            throttle.not_checked(attempt);
            return Err(e.into());
        }
    };
    match user {
        Some(user) if verified => {
            throttle.succeeded(attempt);
            if user.disabled {
                return Err(AuthError::Disabled);
            }
            Ok(user)
        }
        _ => {
            throttle.failed(attempt);
            Err(AuthError::InvalidCredentials)
        }
    }
}

pub struct IssuedToken {
    pub id: i64,
    pub token: String,
    pub expires_at_ms: i64,
}

pub async fn issue_token(db: &Pool, user_id: i64, ttl: Duration, now_ms: i64) -> Result<IssuedToken, sqlx::Error> {
    let kind = TokenKind { label: None, parent: None, max_named: None, epoch: None };
    match issue_labelled_token(db, user_id, kind, ttl, now_ms).await? {
        Ok(issued) => Ok(issued),
        // neither a limit nor a parent applies to a sign-in's token
        Err(_) => Err(sqlx::Error::RowNotFound),
    }
}

/// Why a token was not issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotIssued {
    /// The user has `max_named` named tokens live already.
    TooMany,
    /// The token it was to be made with was revoked (or ran out), or the
    /// user's sessions and tokens were ended, meanwhile.
    CredentialsGone,
}

/// What a token issued is: a sign-in's (no label), or one with a label
/// the user chose (e.g. "laptop"), maybe made with another token
/// (`parent`), and at most `max_named` named ones live per user.
pub struct TokenKind<'a> {
    pub label: Option<&'a str>,
    pub parent: Option<i64>,
    pub max_named: Option<i64>,
    /// The user's session epoch the request was made under: a disable or
    /// an off-boarding ("everything of theirs ends") that raced the
    /// request wins over it.
    pub epoch: Option<i64>,
}

/// A new token, shown once. The limit and the parent are checked in the
/// transaction that stores it: a token made with a token revoked
/// meanwhile (a revocation that raced the request) is not made.
pub async fn issue_labelled_token(
    db: &Pool,
    user_id: i64,
    kind: TokenKind<'_>,
    ttl: Duration,
    now_ms: i64,
) -> Result<Result<IssuedToken, NotIssued>, sqlx::Error> {
    let (token, hash) = token::new_token();
    let expires_at_ms = now_ms.saturating_add(ttl.as_millis() as i64);
    let mut tx = crate::db::write_tx(db).await?;
    if let Some(max) = kind.max_named {
        if accounts::live_named_tokens(&mut tx, user_id, now_ms).await? >= max {
            return Ok(Err(NotIssued::TooMany));
        }
    }
    // its own expiry stands (a personal token made from `jpu login`'s
    // token may outlast that sign-in), but never a revocation
    if let Some(parent) = kind.parent {
        if !accounts::token_is_live(&mut tx, parent, user_id, now_ms).await? {
            return Ok(Err(NotIssued::CredentialsGone));
        }
    }
    if let Some(epoch) = kind.epoch {
        if !accounts::still_in_epoch(&mut tx, user_id, epoch).await? {
            return Ok(Err(NotIssued::CredentialsGone));
        }
    }
    let new = accounts::NewToken {
        user_id,
        token_hash: &hash,
        label: kind.label,
        parent: kind.parent,
        expires_ms: expires_at_ms,
    };
    let id = accounts::insert_token(&mut tx, new, now_ms).await?;
    tx.commit().await?;
    Ok(Ok(IssuedToken { id, token, expires_at_ms }))
}

/// How stale a token's "last used" may get: a write per request would
/// queue every API call behind the database's one writer (the submit
/// load sends ~5,000 requests a second on 64 tokens).
const LAST_USED_EVERY_MS: i64 = 60_000;

/// The caller a bearer token stands for, if it is live. Its "last used"
/// time is brought up to date in the background, at most once a minute.
pub async fn caller_from_token(db: &Pool, token: &str, now_ms: i64) -> Result<Option<Caller>, sqlx::Error> {
    let Some(found) = accounts::user_by_live_token(&mut db.acquire().await?, &token::hash_token(token), now_ms).await?
    else {
        return Ok(None);
    };
    if found.last_used_ms.is_none_or(|t| now_ms - t >= LAST_USED_EVERY_MS) {
        let (db, id) = (db.clone(), found.id);
        tokio::spawn(async move {
            let touched = async {
                let mut tx = crate::db::write_tx(&db).await?;
                accounts::touch_token(&mut tx, id, now_ms).await?;
                tx.commit().await
            };
            if let Err(e) = touched.await {
                tracing::warn!(error = %e, token = id, "cannot note a token's last use");
            }
        });
    }
    Ok(Some(Caller { user: found.user, token_id: Some(found.id) }))
}

/// Whether the credentials `caller` came with still hold (for long-lived
/// responses such as log streams).
pub async fn still_valid(db: &Pool, caller: &Caller, now_ms: i64) -> Result<bool, sqlx::Error> {
    match caller.token_id {
        Some(token) => accounts::token_live(&mut db.acquire().await?, token, now_ms).await,
        None => Ok(caller_from_session(db, caller.user.id, caller.user.session_epoch).await?.is_some()),
    }
}

/// The caller behind a console session, if its user still exists, is not
/// disabled, and the session is of the user's current epoch (a password
/// change, reset or disable moves the epoch on: every older session ends).
pub async fn caller_from_session(db: &Pool, user_id: i64, epoch: i64) -> Result<Option<Caller>, sqlx::Error> {
    let user = accounts::user_by_id(&mut db.acquire().await?, user_id).await?;
    Ok(user.filter(|u| !u.disabled && u.session_epoch == epoch).map(|user| Caller { user, token_id: None }))
}
