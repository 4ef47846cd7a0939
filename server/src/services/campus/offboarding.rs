//! Off-boarding: who the university no longer admits loses what they
//! have here — sessions and tokens end, waiting jobs are cancelled
//! (`OWNER_LEFT`), running ones finish. With a directory it is asked at
//! a user's requests and, for people with waiting jobs, by a sweep;
//! without one the provider is asked again with the refresh token it gave
//! at sign-in (#42 I3). A sweep that would drop most of the people it
//! asked about holds: a misconfigured source must not end everyone's
//! work at once.

use super::{lab_and_role, ACTOR};
use crate::auth::oidc::{Grant, Recheck};
use crate::clock::now_ms;
use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};

/// Users the directory lately confirmed (user id → when), so a signed-in
/// user's requests ask it once per `directory.ldap.recheck_seconds`.
#[derive(Default)]
pub struct Admissions(std::sync::Mutex<std::collections::HashMap<i64, std::time::Instant>>);

/// Whether a signed-in user may go on. A university user the directory no
/// longer lists, or who lost every lab group, may not: their sessions and
/// tokens end here (audited), at their first request after the change.
/// A directory that cannot be asked keeps them in (logged): an outage of
/// the directory must not sign the whole university out.
pub async fn still_admitted(state: &Services, user: &UserRecord) -> bool {
    match dropped_because(state, user).await {
        None => true,
        Some(why) => {
            off_board(state, user, why).await;
            false
        }
    }
}

/// Why the directory no longer admits `user`, if it does not; `None` for
/// someone admitted, not a campus user, lately confirmed, or when the
/// directory cannot be asked (an outage must not sign the university out).
async fn dropped_because(state: &Services, user: &UserRecord) -> Option<&'static str> {
    let directory = state.directory.as_ref()?;
    if !user.campus_owned() {
        return None;
    }
    let ttl = std::time::Duration::from_secs(directory.settings().recheck_seconds);
    let fresh = |at: &std::time::Instant| at.elapsed() < ttl;
    if state.admissions.0.lock().unwrap_or_else(|p| p.into_inner()).get(&user.id).is_some_and(fresh) {
        return None;
    }
    match directory.person(&user.username).await {
        Ok(Some(person)) => {
            let ldap = directory.settings();
            if lab_and_role(&person.groups, directory.lab_group(), &ldap.admin_groups, None).is_some() {
                state.admissions.0.lock().unwrap_or_else(|p| p.into_inner()).insert(user.id, std::time::Instant::now());
                return None;
            }
            Some("in no lab group any more")
        }
        Ok(None) => Some("no longer in the directory"),
        Err(e) => {
            tracing::warn!(error = %e, user = %user.username, "cannot ask the directory; the user stays signed in");
            None
        }
    }
}

async fn off_board(state: &Services, user: &UserRecord, why: &str) {
    state.admissions.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&user.id);
    if let Err(e) = end_access(state, user, why).await {
        tracing::error!(error = %e, user = %user.username, "cannot end the sessions of a user the directory dropped");
    }
}

/// A sweep that would off-board more than this share of the people it
/// asked about (and more than [`SWEEP_FEW`]) does nothing and says so: a
/// directory misconfigured (a wrong base, an access rule) answers "no such
/// person" for everyone, and must not end everyone's work at once.
const SWEEP_MAX_SHARE: f64 = 0.5;
const SWEEP_FEW: usize = 3;

/// Whether a sweep that would drop `dropped` of the `asked` holds.
fn holds(dropped: usize, asked: usize) -> bool {
    dropped > SWEEP_FEW && dropped as f64 > SWEEP_MAX_SHARE * asked as f64
}

/// Asks the directory, every `recheck_seconds` (a second at least), about
/// every campus user with jobs waiting: one it dropped is off-boarded
/// here, not only at their next request (which may never come, and their
/// jobs would start: #42 I4).
pub async fn offboarding_sweep(state: Services) {
    let Some(directory) = state.directory.clone() else { return };
    let every = std::time::Duration::from_secs(directory.settings().recheck_seconds.max(1));
    loop {
        tokio::time::sleep(every).await;
        let ids = match state.db.acquire().await {
            Ok(mut conn) => db::campus_identities::campus_users_with_waiting_jobs(&mut conn).await,
            Err(e) => Err(e),
        };
        let ids = ids.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the off-boarding sweep cannot read the waiting jobs");
            Vec::new()
        });
        let mut dropped = Vec::new();
        for id in &ids {
            let user = match state.db.acquire().await {
                Ok(mut conn) => db::accounts::user_by_id(&mut conn, *id).await.ok().flatten(),
                Err(_) => None,
            };
            if let Some(user) = user {
                if let Some(why) = dropped_because(&state, &user).await {
                    dropped.push((user, why));
                }
            }
        }
        if holds(dropped.len(), ids.len()) {
            tracing::error!(
                dropped = dropped.len(),
                asked = ids.len(),
                "the directory no longer admits most people with waiting jobs: nobody is off-boarded \
                 (check directory.ldap; each is still checked at their own next request)"
            );
            metrics::counter!("campus_offboarding_held_total").increment(1);
            continue;
        }
        for (user, why) in dropped {
            off_board(&state, &user, why).await;
        }
    }
}

/// Without a directory: asks the provider again, every
/// `auth.oidc.recheck_seconds`, about each enabled campus account it gave
/// a refresh token for (#42 I3: a person it dropped kept their sessions
/// and 365-day tokens). Refused there twice in a row: off-boarded (once
/// could be a lapse: a provider that revokes on reuse, a token lost in a
/// crash). Still vouched for: the new ID token's groups bring lab and role
/// up to date as a sign-in does (an admin group gone demotes), and no lab
/// group off-boards. An account with no refresh token (made before they
/// were kept) cannot be asked: its sessions and tokens end, and it signs
/// in again to go on.
pub async fn provider_recheck(state: Services) {
    let Some(oidc) = state.oidc.clone() else { return };
    if !provider_recheck_on(&state) {
        return;
    }
    let mut strikes = std::collections::HashMap::new();
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(oidc.settings().recheck_seconds)).await;
        end_ungranted(&state, &oidc).await;
        provider_round(&state, &oidc, &mut strikes).await;
    }
}

/// Whether the provider itself is asked again (no directory, and
/// `auth.oidc.recheck_seconds` set).
pub fn provider_recheck_on(state: &Services) -> bool {
    state.directory.is_none() && state.oidc.as_ref().is_some_and(|o| o.settings().recheck_seconds > 0)
}

/// What an off-boarded or ended account's refresh token becomes: no grant
/// to ask with until the person signs in again.
const ENDED: &str = "";

async fn end_ungranted(state: &Services, oidc: &crate::auth::oidc::Oidc) {
    let ids = match state.db.acquire().await {
        Ok(mut conn) => db::campus_identities::ungranted(&mut conn, &oidc.settings().issuer).await,
        Err(e) => Err(e),
    };
    for id in ids.unwrap_or_default() {
        let ended = async {
            let now = now_ms();
            let mut tx = db::write_tx(&state.db).await?;
            let Some(user) = db::accounts::user_by_id(&mut tx, id).await? else { return Ok(()) };
            db::accounts::end_sessions_and_tokens(&mut tx, id, None, now).await?;
            forget_grant(&mut tx, id).await?;
            let detail = serde_json::json!({"why": "no refresh token to re-check them with: they sign in again"});
            db::audit::record(&mut tx, ACTOR, "user.sessions_ended", Some(&user.username), &detail, now).await?;
            tx.commit().await.map_err(ServiceError::from)
        };
        if let Err(e) = ended.await {
            tracing::error!(error = %e, user = id, "cannot end the sessions of an account the provider cannot re-check");
        }
    }
}

async fn provider_round(
    state: &Services,
    oidc: &crate::auth::oidc::Oidc,
    strikes: &mut std::collections::HashMap<i64, u32>,
) {
    let issuer = oidc.settings().issuer.clone();
    let held = match state.db.acquire().await {
        Ok(mut conn) => db::campus_identities::held_grants(&mut conn, &issuer).await,
        Err(e) => Err(e),
    };
    let held = held.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the provider re-check cannot read the campus accounts");
        Vec::new()
    });
    strikes.retain(|id, _| held.iter().any(|h| h.user_id == *id));
    let mut dropped = Vec::new();
    for one in &held {
        let user = match state.db.acquire().await {
            Ok(mut conn) => db::accounts::user_by_id(&mut conn, one.user_id).await.ok().flatten(),
            Err(_) => None,
        };
        let Some(user) = user else { continue };
        match oidc.recheck(&Grant::new(one.refresh_token.clone())).await {
            Err(e) => {
                // an outage of the provider must not sign the university out
                tracing::warn!(error = %e, user = %user.username, "cannot ask the provider; the user stays");
            }
            Ok(Recheck::Ended(why)) => {
                let strike = strikes.entry(user.id).or_default();
                *strike += 1;
                tracing::info!(user = %user.username, %why, strike = *strike, "the provider refused the user's grant");
                if *strike >= 2 {
                    dropped.push((user, "the university no longer vouches for them"));
                }
            }
            Ok(Recheck::Vouched { identity, grant }) => {
                strikes.remove(&user.id);
                // the rotated grant first, whatever follows: a provider that
                // rotates answers only the newest next time
                keep_grant(state, &issuer, &one.subject, grant).await;
                let Some(identity) = identity else { continue };
                if identity.subject != one.subject {
                    tracing::error!(user = %user.username, "the provider's re-check named another subject: ignored");
                    continue;
                }
                let settings = oidc.settings();
                if super::lab_and_role(&identity.groups, oidc.lab_group(), &settings.admin_groups, None).is_none() {
                    dropped.push((user, "in no lab group any more"));
                    continue;
                }
                if let Err(e) = super::sign_in(state, &identity).await {
                    tracing::warn!(error = %e, user = %user.username, "the provider's re-check not applied");
                }
            }
        }
    }
    if holds(dropped.len(), held.len()) {
        tracing::error!(
            dropped = dropped.len(),
            asked = held.len(),
            "the provider no longer vouches for most campus accounts: nobody is off-boarded (check auth.oidc)"
        );
        metrics::counter!("campus_offboarding_held_total").increment(1);
        return;
    }
    for (user, why) in dropped {
        strikes.remove(&user.id);
        off_board(state, &user, why).await;
    }
}

async fn keep_grant(state: &Services, issuer: &str, subject: &str, grant: Option<Grant>) {
    let Some(grant) = grant else { return };
    let kept = async {
        let mut tx = db::write_tx(&state.db).await?;
        db::campus_identities::set_grant(&mut tx, issuer, subject, Some(grant.secret())).await?;
        tx.commit().await
    };
    if let Err(e) = kept.await {
        tracing::error!(error = %e, "cannot keep the provider's rotated grant");
    }
}

/// The account's refresh token is forgotten: it is not asked about again
/// (nor counted in a later round's share) until the person signs in.
async fn forget_grant(tx: &mut db::WriteTx, user_id: i64) -> Result<(), ServiceError> {
    Ok(db::campus_identities::end_grant(tx, user_id, ENDED).await?)
}

/// The end reason of a waiting job whose owner the university dropped.
pub const OWNER_LEFT: &str = "OWNER_LEFT";

/// Off-boarding: sessions and tokens end, and jobs still waiting never
/// start (#42 I4: they did); running ones finish, as when an admin
/// disables someone.
async fn end_access(state: &Services, user: &UserRecord, why: &str) -> Result<(), ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::end_sessions_and_tokens(&mut tx, user.id, None, now).await?;
    forget_grant(&mut tx, user.id).await?;
    let waiting = db::jobs::waiting_of_user(&mut tx, user.id).await?;
    for job in &waiting {
        db::jobs::cancel_for(&mut tx, *job, now, OWNER_LEFT).await?;
    }
    let detail = serde_json::json!({"why": why, "waiting_jobs_cancelled": waiting});
    db::audit::record(&mut tx, ACTOR, "user.sessions_ended", Some(&user.username), &detail, now).await?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(())
}
