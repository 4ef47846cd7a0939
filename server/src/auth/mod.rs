//! Who is calling: password sign-in (argon2id, throttled), API tokens, and
//! resolving a bearer token or console session to a [`Caller`].

pub mod password;
pub mod throttle;
pub mod token;

use std::time::{Duration, Instant};

use sqlx::SqlitePool;

use crate::db::accounts::{self, UserRecord};
pub use password::PasswordError;
pub use throttle::LoginThrottle;

/// The authenticated principal of a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: UserRecord,
    /// The API token used, if the request came with one (not a session).
    pub token_id: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("wrong username or password")]
    InvalidCredentials,
    #[error("too many failed sign-ins; retry in {} s", .0.as_secs().max(1))]
    Throttled(Duration),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Checks a username and password. Unknown users and wrong passwords take
/// the same path and the same time.
pub async fn authenticate(
    db: &SqlitePool,
    throttle: &LoginThrottle,
    username: &str,
    password: &str,
) -> Result<UserRecord, AuthError> {
    throttle.check(username, Instant::now()).map_err(AuthError::Throttled)?;
    let user = accounts::user_by_username(&mut *db.acquire().await?, username).await?;
    let stored = user.as_ref().map(|u| u.password_hash.clone());
    let verified = password::verify_password(stored, password.to_string()).await?;
    match user {
        Some(user) if verified => {
            throttle.record_success(username);
            Ok(user)
        }
        _ => {
            throttle.record_failure(username, Instant::now());
            Err(AuthError::InvalidCredentials)
        }
    }
}

pub struct IssuedToken {
    pub token: String,
    pub expires_at_ms: i64,
}

pub async fn issue_token(db: &SqlitePool, user_id: i64, ttl: Duration, now_ms: i64) -> Result<IssuedToken, sqlx::Error> {
    issue_labelled_token(db, user_id, None, ttl, now_ms).await
}

/// A token with a label the user chose (e.g. "laptop"), shown once.
pub async fn issue_labelled_token(
    db: &SqlitePool,
    user_id: i64,
    label: Option<&str>,
    ttl: Duration,
    now_ms: i64,
) -> Result<IssuedToken, sqlx::Error> {
    let (token, hash) = token::new_token();
    let expires_at_ms = now_ms.saturating_add(ttl.as_millis() as i64);
    accounts::insert_token(&mut *db.acquire().await?, user_id, &hash, label, now_ms, expires_at_ms).await?;
    Ok(IssuedToken { token, expires_at_ms })
}

/// The caller a bearer token stands for, if it is live.
pub async fn caller_from_token(db: &SqlitePool, token: &str, now_ms: i64) -> Result<Option<Caller>, sqlx::Error> {
    let found = accounts::user_by_live_token(&mut *db.acquire().await?, &token::hash_token(token), now_ms).await?;
    Ok(found.map(|(token_id, user)| Caller { user, token_id: Some(token_id) }))
}

/// The caller behind a console session's user id, if the user still exists.
pub async fn caller_from_session(db: &SqlitePool, user_id: i64) -> Result<Option<Caller>, sqlx::Error> {
    let user = accounts::user_by_id(&mut *db.acquire().await?, user_id).await?;
    Ok(user.map(|user| Caller { user, token_id: None }))
}
