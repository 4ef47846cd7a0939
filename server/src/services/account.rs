//! A user's own account: change password (the current one is checked,
//! with the sign-in slow-down), and API tokens (list, create — the secret
//! is shown once —, revoke one's own).

use app::msg;
use std::time::Duration;

use app::model::views::{NewToken, PersonalToken, TokenView};

use crate::auth::{self, AuthError, Caller};
use crate::clock::{now_ms, rfc3339};
use crate::db;
use crate::services::{ServiceError, Services};

/// Changes the caller's password and ends every other session and token
/// of theirs (the token this request came with, if any, stays). Returns
/// the new session epoch, for the console session that asked to keep.
pub async fn change_password(state: &Services, caller: &Caller, current: &str, new: &str) -> Result<i64, ServiceError> {
    if caller.user.directory_made() {
        return Err(ServiceError::Validation(msg!("err-password-university", user = caller.user.username.clone())));
    }
    let min = crate::services::admin::MIN_PASSWORD;
    if new.chars().count() < min || new.len() > 1024 {
        return Err(ServiceError::Validation(msg!("err-password-length", min = min).on("new password")));
    }
    // one slow-down for every signed-in check of this user's password,
    // wherever it comes from
    let anywhere = std::net::IpAddr::from([0, 0, 0, 0]);
    match check_password(state, &caller.user.username, current, anywhere).await {
        Ok(_) => {}
        Err(AuthError::InvalidCredentials) => return Err(ServiceError::Validation(msg!("err-current-password"))),
        Err(e) => return Err(e.into()),
    }
    let hash = auth::password::hash_password(new.to_string()).await.map_err(ServiceError::from)?;
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::set_password(&mut tx, caller.user.id, &hash).await?;
    let epoch = db::accounts::end_sessions_and_tokens(&mut tx, caller.user.id, caller.token_id, now_ms()).await?;
    tx.commit().await?;
    Ok(epoch)
}

pub fn sign_in_options(state: &Services) -> app::model::views::SignInOptions {
    app::model::views::SignInOptions {
        passwords_for_everyone: state.settings.auth.passwords,
        button: state.settings.auth.oidc.display_name.clone(),
        university: state.oidc.is_some(),
    }
}

/// A password check under this site's rules: the slow-down, and who may
/// use a password at all (`auth.passwords`). The console's sign-in form
/// tells each refusal apart, so it gets the [`AuthError`].
pub async fn check_password(
    state: &Services,
    username: &str,
    password: &str,
    client: std::net::IpAddr,
) -> Result<db::accounts::UserRecord, AuthError> {
    let auth = &state.settings.auth;
    // with a directory, a name no account has yet, or one a directory
    // sign-in made, is the directory's, and so is its password; accounts
    // made here (local ones, an admin's) keep their own
    if let Some(directory) = state.directory.as_deref() {
        let user = db::accounts::user_by_username(&mut state.db.acquire().await?, username).await?;
        if user.as_ref().is_none_or(|u| u.directory_made()) {
            if !auth.passwords {
                return Err(AuthError::PasswordsOff(auth.oidc.display_name.clone()));
            }
            return crate::services::campus::directory_password_sign_in(state, directory, username, password, client)
                .await;
        }
    }
    let passwords = if auth.passwords {
        auth::Passwords::Everyone
    } else {
        auth::Passwords::LocalOnly { button: auth.oidc.display_name.clone() }
    };
    auth::authenticate(&state.db, &state.throttle, &passwords, username, password, client).await
}

/// `POST /v1/auth/token`: a password sign-in (with the sign-in
/// slow-down for `client`) that answers with a new API token.
pub async fn sign_in_for_token(
    state: &Services,
    username: &str,
    password: &str,
    client: std::net::IpAddr,
) -> Result<NewToken, ServiceError> {
    let user = check_password(state, username, password, client).await?;
    let ttl = Duration::from_secs(u64::from(state.settings.auth.token_ttl_hours) * 3600);
    let issued = auth::issue_token(&state.db, user.id, ttl, now_ms()).await?;
    Ok(NewToken { token: issued.token, expires_at: rfc3339(issued.expires_at_ms) })
}

pub async fn tokens(state: &Services, caller: &Caller) -> Result<Vec<TokenView>, ServiceError> {
    Ok(db::accounts::live_tokens(&mut state.db.acquire().await?, caller.user.id, now_ms()).await?)
}

/// A personal token's life when its owner names none, and the longest
/// they may ask for: a script's credential should not outlive a year.
pub const PERSONAL_TOKEN_DAYS_DEFAULT: i64 = 90;
pub const PERSONAL_TOKEN_DAYS_MAX: i64 = 365;
/// Named tokens (personal and device) one person may have live: enough
/// for every script and machine, not a store of credentials (T1).
pub const MAX_NAMED_TOKENS: i64 = 100;

/// A personal token for scripts (`POST /v1/auth/tokens`, the account
/// page): named by its owner, `expires_in_days` 1..=365 (default 90),
/// shown this once and stored only as a hash.
pub async fn create_token(
    state: &Services,
    caller: &Caller,
    name: &str,
    expires_in_days: Option<i64>,
) -> Result<PersonalToken, ServiceError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(ServiceError::field("name", msg!("err-token-name")));
    }
    if name.chars().any(|c| c.is_control() || crate::services::jobs::input::is_invisible(c)) {
        return Err(ServiceError::field("name", msg!("err-token-name-chars")));
    }
    let days = expires_in_days.unwrap_or(PERSONAL_TOKEN_DAYS_DEFAULT);
    if !(1..=PERSONAL_TOKEN_DAYS_MAX).contains(&days) {
        return Err(ServiceError::field("expires_in_days", msg!("err-one-to", max = PERSONAL_TOKEN_DAYS_MAX)));
    }
    let ttl = Duration::from_secs(days as u64 * 86_400);
    // a token made with a token dies with it (T1)
    let kind = auth::TokenKind {
        label: Some(name),
        parent: caller.token_id,
        max_named: Some(MAX_NAMED_TOKENS),
        epoch: Some(caller.user.session_epoch),
    };
    let issued = match auth::issue_labelled_token(&state.db, caller.user.id, kind, ttl, now_ms()).await? {
        Ok(issued) => issued,
        Err(auth::NotIssued::TooMany) => {
            return Err(ServiceError::Conflict(msg!("err-too-many-tokens", max = MAX_NAMED_TOKENS)))
        }
        Err(auth::NotIssued::CredentialsGone) => return Err(ServiceError::InvalidCredentials(msg!("err-token-gone"))),
    };
    Ok(PersonalToken {
        id: issued.id,
        name: name.to_string(),
        token: issued.token,
        expires_at: rfc3339(issued.expires_at_ms),
    })
}

pub async fn revoke_token(state: &Services, caller: &Caller, id: i64) -> Result<(), ServiceError> {
    let mut tx = db::write_tx(&state.db).await?;
    let done = db::accounts::revoke_token_tree(&mut tx, Some(caller.user.id), id, now_ms()).await?;
    tx.commit().await?;
    if done {
        Ok(())
    } else {
        Err(ServiceError::NotFound(msg!("err-no-such-token")))
    }
}

/// Keeps a signed-in person's console language (`en` or `ko`).
pub async fn set_locale(state: &Services, caller: &Caller, locale: app::i18n::Locale) -> Result<(), ServiceError> {
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::set_locale(&mut tx, caller.user.id, locale.tag()).await?;
    tx.commit().await?;
    Ok(())
}
