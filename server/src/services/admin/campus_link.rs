//! An admin links an account to a university identity (#42 I1): campus
//! sign-in finds accounts by the provider's (issuer, `sub`), never by the
//! name its token carries, so an account that existed before someone's
//! first campus sign-in (made by an admin, or a password account moving to
//! the university) is theirs only once an admin links it. Names that differ
//! from an existing one only in case are refused everywhere.

use app::msg;

use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};

/// Longest `sub` taken (OpenID Connect Core §2: at most 255 ASCII).
const MAX_SUBJECT: usize = 255;

/// Refuses `name` if another user's name differs from it only in case.
pub async fn refuse_look_alike(tx: &mut db::WriteTx, field: &str, name: &str) -> Result<(), ServiceError> {
    match db::campus_identities::look_alike(tx, name).await? {
        Some(other) => Err(ServiceError::field(field, msg!("err-name-look-alike", name = name, other = other))),
        None => Ok(()),
    }
}

/// Links `user` to the identity `subject` of the configured provider, or
/// (`None`) removes its link. Returns what the audit log records.
pub async fn set_link(
    state: &Services,
    tx: &mut db::WriteTx,
    user: &UserRecord,
    subject: Option<&str>,
    now: i64,
) -> Result<serde_json::Value, ServiceError> {
    // whoever signed in through the identity the account leaves is out,
    // everywhere, now (a link made in error must not keep its sessions)
    let before = db::campus_identities::link_of(tx, user.id).await?;
    if before.as_ref().is_some_and(|l| l.subject.as_deref() != subject) {
        db::accounts::end_sessions_and_tokens(tx, user.id, None, now).await?;
    }
    let Some(subject) = subject else {
        db::campus_identities::unlink(tx, user.id).await?;
        return Ok(serde_json::Value::Null);
    };
    let issuer = state.settings.auth.oidc.issuer.trim();
    if issuer.is_empty() {
        return Err(ServiceError::field("campus_subject", msg!("err-campus-link-off")));
    }
    if subject.is_empty() || subject.len() > MAX_SUBJECT || subject.chars().any(char::is_control) {
        let got = subject.chars().count() as u64;
        return Err(ServiceError::field(
            "campus_subject",
            msg!("err-chars-count", max = MAX_SUBJECT as u64, got = got),
        ));
    }
    if user.local {
        return Err(ServiceError::field("campus_subject", msg!("err-campus-link-local", user = &user.username)));
    }
    if let Some(other) = db::campus_identities::user_for(tx, issuer, subject).await? {
        if other != user.id {
            let other = db::accounts::user_by_id(tx, other).await?.map(|u| u.username).unwrap_or_default();
            return Err(ServiceError::Conflict(msg!("err-campus-link-taken", other = other)));
        }
    }
    db::campus_identities::link(tx, user.id, issuer, subject, now).await?;
    Ok(serde_json::json!(subject))
}
