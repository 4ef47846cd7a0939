//! Password sign-in on a campus with a directory (#44: LDAP and no OpenID
//! provider is still common). Local accounts keep their own password;
//! every other name is the directory's, and its password is checked by
//! binding to the directory as the person (never stored). The rules that
//! admit someone are campus sign-in's: a lab group, `admin_groups`, the
//! directory's ids above `min_id`, a uid nobody else has. The sign-in
//! slow-down and the lanes are those of local passwords: the bind waits
//! for a slot of its lane, so a flood of guesses neither reaches the
//! directory unbounded nor keeps out the people nobody guesses at.

use app::model::SignIn;

use super::{commit_with_uids, directory_facts, in_step, new_account, placed, valid_name, CampusError, Refusal};
use crate::auth::directory::{Directory, DirectoryError, Person};
use crate::auth::{password, AuthError};
use crate::clock::now_ms;
use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};

/// The audit log's actor for changes a directory sign-in makes.
const ACTOR: &str = "ldap";
/// Longest a password check may take, connection to bind.
const CHECK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(15);

/// Failed binds one name may cause, from any number of addresses, per
/// [`GUARD_WINDOW`]: each is a real bind, and a directory's own lockout
/// (ppolicy, Active Directory) would otherwise let anyone lock a person
/// out of every campus service through this site. Below the usual
/// thresholds (10 and more).
const GUARD_FAILURES: u32 = 8;
const GUARD_WINDOW: std::time::Duration = std::time::Duration::from_secs(15 * 60);

type Failures = std::collections::HashMap<String, (u32, std::time::Instant)>;

static NAME_GUARD: NameGuard = NameGuard(std::sync::Mutex::new(None));

/// Failed directory binds per (lower-cased) name.
struct NameGuard(std::sync::Mutex<Option<Failures>>);

impl NameGuard {
    /// How long `name` must wait before its password goes to the directory.
    fn wait(&self, name: &str, now: std::time::Instant) -> Option<std::time::Duration> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let map = map.get_or_insert_with(Default::default);
        let (failures, since) = *map.get(name)?;
        let over = since + GUARD_WINDOW;
        if now >= over {
            map.remove(name);
            return None;
        }
        (failures >= GUARD_FAILURES).then(|| over - now)
    }

    fn failed(&self, name: &str, now: std::time::Instant) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let map = map.get_or_insert_with(Default::default);
        // bounded: names whose window is over go first
        if map.len() >= 100_000 {
            map.retain(|_, (_, since)| now.duration_since(*since) < GUARD_WINDOW);
        }
        map.entry(name.to_string()).or_insert((0, now)).0 += 1;
    }
}

/// Checks a non-local name's password against the directory and lets the
/// person in (creating or updating their account), or says why not.
pub async fn sign_in(
    state: &Services,
    directory: &Directory,
    username: &str,
    password: &str,
    client: std::net::IpAddr,
) -> Result<UserRecord, AuthError> {
    let known = db::accounts::user_by_username(&mut state.db.acquire().await?, username).await?.is_some();
    // directories match names regardless of case: `KIM` is kim's guess too
    let key = username.to_ascii_lowercase();
    let now = std::time::Instant::now();
    let attempt = state.throttle.begin(&key, client, now).map_err(AuthError::Throttled)?;
    if let Some(wait) = NAME_GUARD.wait(&key, now) {
        state.throttle.not_checked(attempt);
        return Err(AuthError::Throttled(wait));
    }
    let lane = if known && state.throttle.is_clean(&key, client, now) {
        password::Lane::Trusted
    } else {
        password::Lane::Open
    };
    // a name that could never be an account is not sent to the directory
    let checked = if valid_name(username) {
        let check = tokio::time::timeout(CHECK_DEADLINE, directory.check_password(username, password));
        password::in_directory_lane(lane, check)
            .await
            .map(|r| r.unwrap_or_else(|_| Err(DirectoryError::Unavailable("no answer within 15 s".into()))))
    } else {
        Ok(Ok(None))
    };
    let person = match checked {
        Ok(Ok(Some(person))) => person,
        Ok(Ok(None)) => {
            state.throttle.failed(attempt);
            NAME_GUARD.failed(&key, now);
            return Err(AuthError::InvalidCredentials);
        }
        Ok(Err(e)) => {
            // not checked: neither a failure nor a success
            state.throttle.not_checked(attempt);
            return Err(AuthError::Directory(e.to_string()));
        }
        Err(busy) => {
            state.throttle.not_checked(attempt);
            return Err(busy.into());
        }
    };
    state.throttle.succeeded(attempt);
    match admit(state, directory, username, person).await {
        Ok(user) => Ok(user),
        Err(CampusError::Refused(Refusal::Disabled(_))) => Err(AuthError::Disabled),
        Err(CampusError::Refused(why)) => Err(AuthError::Refused(why.message())),
        Err(CampusError::Directory(e)) => Err(AuthError::Directory(e)),
        Err(CampusError::Service(ServiceError::Conflict(m))) => Err(AuthError::Refused(m)),
        Err(CampusError::Service(e)) => Err(AuthError::Directory(e.to_string())),
    }
}

/// Creates or updates the directory's person as its entry says.
async fn admit(
    state: &Services,
    directory: &Directory,
    username: &str,
    person: Person,
) -> Result<UserRecord, CampusError> {
    let facts = directory_facts(directory, username, person)?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let existing = db::accounts::user_by_username(&mut tx, username).await?;
    match &existing {
        // an account made here (made meanwhile, by an admin) is never the
        // directory's to claim by its name
        Some(user) if !user.directory_made() => return Err(Refusal::Local(user.username.clone()).into()),
        Some(user) if user.disabled => return Err(Refusal::Disabled(user.username.clone()).into()),
        Some(_) => {}
        // `Kim` binds as kim's entry in most directories: one person, one account
        None => {
            if let Some(other) = db::campus_identities::look_alike(&mut tx, username).await? {
                return Err(Refusal::LookAlike { name: username.to_string(), other }.into());
            }
        }
    }
    let current_lab = existing.as_ref().map(|u| u.lab.as_str());
    let super::admit::Placed { lab_id, lab, role, moved } =
        placed(&mut tx, &facts, username, current_lab, &state.settings, ACTOR, now).await?;
    let mut user = match existing {
        Some(user) => user,
        None => {
            let detail = serde_json::json!({"lab": lab, "role": role.as_str(), "from": "the directory"});
            new_account(&mut tx, username, (lab_id, role), SignIn::Password, (ACTOR, detail), now).await?
        }
    };
    let changed = in_step(&mut tx, &mut user, (lab_id, &lab), role, facts.ids).await?;
    if !changed.is_empty() {
        db::accounts::update_user(&mut tx, &user).await?;
        let detail = serde_json::Value::Object(changed);
        db::audit::record(&mut tx, ACTOR, "user.update", Some(&user.username), &detail, now).await?;
    }
    commit_with_uids(state, tx, user.id, moved).await
}
