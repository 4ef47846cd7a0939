//! A user's own account: change password (the current one is checked,
//! with the sign-in slow-down), and API tokens (list, create — the secret
//! is shown once —, revoke one's own).

use std::time::Duration;

use app::model::views::{NewToken, TokenView};

use crate::auth::{self, AuthError, Caller};
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::services::{ServiceError, Services};

/// Changes the caller's password and ends every other session and token
/// of theirs (the token this request came with, if any, stays). Returns
/// the new session epoch, for the console session that asked to keep.
pub async fn change_password(state: &Services, caller: &Caller, current: &str, new: &str) -> Result<i64, ServiceError> {
    let min = crate::services::admin::MIN_PASSWORD;
    if new.chars().count() < min || new.len() > 1024 {
        return Err(ServiceError::Validation(format!("new password: must be {min} to 1024 characters")));
    }
    // one slow-down for every signed-in check of this user's password,
    // wherever it comes from
    let anywhere = std::net::IpAddr::from([0, 0, 0, 0]);
    match auth::authenticate(&state.db, &state.throttle, &caller.user.username, current, anywhere).await {
        Ok(_) => {}
        Err(AuthError::InvalidCredentials) => {
            return Err(ServiceError::Validation("the current password is wrong".into()))
        }
        Err(e) => return Err(e.into()),
    }
    let hash = auth::password::hash_password(new.to_string()).await.map_err(ServiceError::from)?;
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::set_password(&mut tx, caller.user.id, &hash).await?;
    let epoch = db::accounts::end_sessions_and_tokens(&mut tx, caller.user.id, caller.token_id, now_ms()).await?;
    tx.commit().await?;
    Ok(epoch)
}

/// `POST /v1/auth/token`: a password sign-in (with the sign-in
/// slow-down for `client`) that answers with a new API token.
pub async fn sign_in_for_token(
    state: &Services,
    username: &str,
    password: &str,
    client: std::net::IpAddr,
) -> Result<NewToken, ServiceError> {
    let user = auth::authenticate(&state.db, &state.throttle, username, password, client).await?;
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued = auth::issue_token(&state.db, user.id, ttl, now_ms()).await?;
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}

pub async fn tokens(state: &Services, caller: &Caller) -> Result<Vec<TokenView>, ServiceError> {
    Ok(db::accounts::live_tokens(&mut *state.db.acquire().await?, caller.user.id, now_ms()).await?)
}

pub async fn create_token(state: &Services, caller: &Caller, label: &str) -> Result<NewToken, ServiceError> {
    let label = label.trim();
    if label.chars().count() > 64 {
        return Err(ServiceError::Validation("label: at most 64 characters".into()));
    }
    if label.chars().any(|c| c.is_control() || crate::services::jobs::input::is_invisible(c)) {
        return Err(ServiceError::Validation(
            "label: printable characters only, no invisible or text-direction ones".into(),
        ));
    }
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued =
        auth::issue_labelled_token(&state.db, caller.user.id, Some(label).filter(|l| !l.is_empty()), ttl, now_ms())
            .await?;
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}

pub async fn revoke_token(state: &Services, caller: &Caller, id: i64) -> Result<(), ServiceError> {
    let mut tx = db::write_tx(&state.db).await?;
    let done = db::accounts::revoke_own_token(&mut tx, caller.user.id, id, now_ms()).await?;
    tx.commit().await?;
    if done {
        Ok(())
    } else {
        Err(ServiceError::NotFound("no such token".into()))
    }
}
