//! A user's own account: change password (the current one is checked,
//! with the sign-in slow-down), and API tokens (list, create — the secret
//! is shown once —, revoke one's own).

use std::time::Duration;

use app::views::{NewToken, TokenView};

use crate::auth::{self, AuthError, Caller};
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("the current password is wrong")]
    WrongPassword,
    #[error("{0}")]
    Invalid(String),
    #[error("no such token")]
    NoSuchToken,
    #[error(transparent)]
    Auth(AuthError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Changes the caller's password and ends every other session and token
/// of theirs (the token this request came with, if any, stays). Returns
/// the new session epoch, for the console session that asked to keep.
pub async fn change_password(state: &AppState, caller: &Caller, current: &str, new: &str) -> Result<i64, AccountError> {
    let min = crate::admin::MIN_PASSWORD;
    if new.chars().count() < min || new.len() > 1024 {
        return Err(AccountError::Invalid(format!("new password: must be {min} to 1024 characters")));
    }
    // one slow-down for every signed-in check of this user's password,
    // wherever it comes from
    let anywhere = std::net::IpAddr::from([0, 0, 0, 0]);
    match auth::authenticate(&state.db, &state.throttle, &caller.user.username, current, anywhere).await {
        Ok(_) => {}
        Err(AuthError::InvalidCredentials) => return Err(AccountError::WrongPassword),
        Err(e) => return Err(AccountError::Auth(e)),
    }
    let hash = auth::password::hash_password(new.to_string()).await.map_err(|e| AccountError::Auth(e.into()))?;
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::set_password(&mut tx, caller.user.id, &hash).await?;
    let epoch = db::accounts::end_sessions_and_tokens(&mut tx, caller.user.id, caller.token_id, now_ms()).await?;
    tx.commit().await?;
    Ok(epoch)
}

pub async fn tokens(state: &AppState, caller: &Caller) -> Result<Vec<TokenView>, AccountError> {
    Ok(db::accounts::live_tokens(&mut *state.db.acquire().await?, caller.user.id, now_ms()).await?)
}

pub async fn create_token(state: &AppState, caller: &Caller, label: &str) -> Result<NewToken, AccountError> {
    let label = label.trim();
    if label.chars().count() > 64 {
        return Err(AccountError::Invalid("label: at most 64 characters".into()));
    }
    if label.chars().any(|c| c.is_control() || crate::jobs::input::is_invisible(c)) {
        return Err(AccountError::Invalid(
            "label: printable characters only, no invisible or text-direction ones".into(),
        ));
    }
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued =
        auth::issue_labelled_token(&state.db, caller.user.id, Some(label).filter(|l| !l.is_empty()), ttl, now_ms())
            .await?;
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}

pub async fn revoke_token(state: &AppState, caller: &Caller, id: i64) -> Result<(), AccountError> {
    let mut tx = db::write_tx(&state.db).await?;
    let done = db::accounts::revoke_own_token(&mut tx, caller.user.id, id, now_ms()).await?;
    tx.commit().await?;
    if done {
        Ok(())
    } else {
        Err(AccountError::NoSuchToken)
    }
}
