//! Campus sign-in's rules (api.md "Sign-in through the university"): who
//! the provider's answer lets in, and as what. A group matching
//! `lab_group` names the lab (created, audited, when new); `admin_groups`
//! make an admin; nobody without a lab group gets in. With a directory,
//! its entry decides (groups, `uidNumber`, `gidNumber`) and nobody without
//! one gets in; else the token's groups claim. The first sign-in
//! creates the user, every sign-in brings lab and role up to date (each
//! change audited, by the actor `oidc`). Jobs keep the lab they were
//! submitted under: only the user's row changes here.

use app::model::{Role, SignIn};
use app::{i18n::Msg, msg};

use crate::auth::directory::{Directory, DirectoryError, Person};
use crate::auth::oidc::Identity;
use crate::clock::now_ms;
use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};
use admit::{commit_with_uids, in_step, new_account, placed};

mod admit;
mod offboarding;
mod password;
pub use offboarding::{
    offboarding_sweep, provider_recheck, provider_recheck_on, still_admitted, Admissions, OWNER_LEFT,
};
pub use password::sign_in as directory_password_sign_in;

/// The audit log's actor for changes campus sign-in makes.
const ACTOR: &str = "oidc";
/// `nobody`: shared by whatever runs unprivileged, never a person's id.
const NOBODY: i64 = 65534;

/// Why someone the provider vouched for is not let in (a 403 page).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.message())]
pub enum Refusal {
    NoLabGroup { username: String, pattern: String },
    Disabled(String),
    Local(String),
    BadName(String),
    NoDirectoryEntry(String),
    Ambiguous(String, usize),
    UidTaken { uid: i64, other: String },
    NotLinked { user: String, subject: String },
    SystemId { user: String, attribute: String, id: i64, min: u32 },
    LookAlike { name: String, other: String },
    NoGrant(String),
}

impl Refusal {
    /// Why, for the person at the sign-in page (in their language) or the
    /// CLI's device sign-in (in English).
    pub fn message(&self) -> Msg {
        match self {
            Refusal::NoLabGroup { username, pattern } => msg!("err-no-lab-group", user = username, pattern = pattern),
            Refusal::Disabled(user) => msg!("err-campus-disabled", user = user),
            Refusal::Local(user) => msg!("err-campus-local", user = user),
            Refusal::BadName(name) => msg!("err-campus-bad-name", name = name),
            Refusal::NoDirectoryEntry(user) => msg!("err-no-directory-entry", user = user),
            Refusal::Ambiguous(user, n) => msg!("err-directory-ambiguous", user = user, n = *n),
            Refusal::UidTaken { uid, other } => msg!("err-uid-taken-directory", uid = *uid, other = other),
            Refusal::NotLinked { user, subject } => msg!("err-campus-not-linked", user = user, subject = subject),
            Refusal::SystemId { user, attribute, id, min } => {
                msg!("err-directory-system-id", user = user, attribute = attribute, id = *id, min = *min)
            }
            Refusal::LookAlike { name, other } => msg!("err-name-look-alike", name = name, other = other),
            Refusal::NoGrant(user) => msg!("err-campus-no-grant", user = user),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CampusError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The directory cannot be asked (our side: 502).
    #[error("{0}")]
    Directory(String),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<sqlx::Error> for CampusError {
    fn from(e: sqlx::Error) -> Self {
        CampusError::Service(e.into())
    }
}

/// The lab and role the groups give. Several lab groups: the user's
/// current lab if it is one of them (no flapping), else the first by name.
pub fn lab_and_role(
    groups: &[String],
    lab_group: &regex::Regex,
    admin_groups: &[String],
    current_lab: Option<&str>,
) -> Option<(String, Role)> {
    let mut labs: Vec<String> = groups
        .iter()
        .filter_map(|g| lab_group.captures(g).and_then(|c| c.get(1)).map(|m| m.as_str().to_string()))
        .filter(|lab| !lab.is_empty())
        .collect();
    labs.sort();
    labs.dedup();
    let lab = match current_lab {
        Some(current) if labs.iter().any(|l| l == current) => current.to_string(),
        _ => labs.into_iter().next()?,
    };
    let role = if groups.iter().any(|g| admin_groups.contains(g)) { Role::Admin } else { Role::Researcher };
    Some((lab, role))
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// What decides a user's lab, role and ids: the directory's entry when one
/// is configured, else the provider's token.
struct Facts {
    groups: Vec<String>,
    lab_group: regex::Regex,
    admin_groups: Vec<String>,
    /// `uidNumber`, `gidNumber` and the groups' gidNumbers (directory only).
    ids: Option<(Option<i64>, Option<i64>, Vec<i64>)>,
    /// The groups' `cn`s with their (regular) gidNumbers (directory only).
    named_gids: Vec<(String, i64)>,
}

impl Facts {
    /// The gid of `lab`'s group in the directory: its share's group, which
    /// the site's nodes give every member's job (policy §13). None without
    /// one, or when several of the person's groups name the lab with
    /// different gids (nothing to choose between).
    fn lab_gid(&self, lab: &str) -> Option<i64> {
        let mut gids = self
            .named_gids
            .iter()
            .filter(|(cn, _)| self.lab_group.captures(cn).and_then(|c| c.get(1)).is_some_and(|m| m.as_str() == lab));
        let (_, gid) = gids.next()?;
        gids.all(|(_, other)| other == gid).then_some(*gid)
    }
}

/// `name`: the account's own name once the identity is linked to one (the
/// token's name may be another person's: the directory is asked about
/// the account, not about whoever the provider's answer names).
async fn facts(state: &Services, who: &Identity, name: &str) -> Result<Facts, CampusError> {
    let Some(directory) = &state.directory else {
        let oidc = state.oidc.as_deref().ok_or_else(|| ServiceError::NotFound(msg!("err-no-campus-sign-in")))?;
        return Ok(Facts {
            groups: who.groups.clone(),
            lab_group: oidc.lab_group().clone(),
            admin_groups: oidc.settings().admin_groups.clone(),
            ids: None,
            named_gids: Vec::new(),
        });
    };
    let person = match directory.person(name).await {
        Ok(Some(person)) => person,
        Ok(None) => return Err(Refusal::NoDirectoryEntry(name.to_string()).into()),
        Err(DirectoryError::Ambiguous(n)) => return Err(Refusal::Ambiguous(name.to_string(), n).into()),
        Err(e) => return Err(CampusError::Directory(e.to_string())),
    };
    directory_facts(directory, name, person)
}

/// What the directory's entry for `name` says, under the admin API's rules.
fn directory_facts(directory: &Directory, name: &str, person: Person) -> Result<Facts, CampusError> {
    let ldap = directory.settings();
    // the admin API's rules: a system account's or group's id (uid 0, 101
    // = postgres, gid 42 = shadow) never reaches a job (#42 I2)
    let regular = |id: i64| id >= i64::from(ldap.min_id) && id != NOBODY && id <= i64::from(i32::MAX);
    for (attribute, id) in [("uidNumber", person.uid_number), ("gidNumber", person.gid_number)] {
        if let Some(id) = id.filter(|id| !regular(*id)) {
            let (user, min) = (name.to_string(), ldap.min_id);
            return Err(Refusal::SystemId { user, attribute: attribute.into(), id, min }.into());
        }
    }
    let (group_gids, dropped): (Vec<i64>, Vec<i64>) = person.group_gids.into_iter().partition(|g| regular(*g));
    if !dropped.is_empty() {
        tracing::warn!(user = %name, ?dropped, min = ldap.min_id,
            "the directory's groups below directory.ldap.min_id are not given to jobs");
    }
    let named_gids = person.named_gids.into_iter().filter(|(_, gid)| regular(*gid)).collect();
    Ok(Facts {
        groups: person.groups,
        lab_group: directory.lab_group().clone(),
        admin_groups: ldap.admin_groups.clone(),
        ids: Some((person.uid_number, person.gid_number, group_gids)),
        named_gids,
    })
}

/// Lets the provider's user in: creates or updates them from the
/// directory (or the token); returns who signed in.
pub async fn sign_in(state: &Services, who: &Identity) -> Result<UserRecord, CampusError> {
    if !valid_name(&who.username) {
        return Err(Refusal::BadName(who.username.clone()).into());
    }
    // the directory is asked before the write turn is taken, by the name
    // of the account the identity is linked to
    let linked = {
        let mut conn = state.db.acquire().await?;
        match db::campus_identities::user_for(&mut conn, &who.issuer, &who.subject).await? {
            Some(id) => db::accounts::user_by_id(&mut conn, id).await?.map(|u| u.username),
            None => None,
        }
    };
    let asked = linked.clone().unwrap_or_else(|| who.username.clone());
    let facts = facts(state, who, &asked).await?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let existing = account_of(&mut tx, who, now).await?;
    if existing.as_ref().is_some_and(|u| u.username != asked) {
        // linked or renamed between the two reads: the facts are another's
        return Err(ServiceError::Conflict(msg!("err-campus-retry")).into());
    }
    if let Some(user) = &existing {
        if user.local {
            return Err(Refusal::Local(user.username.clone()).into());
        }
        if user.disabled {
            return Err(Refusal::Disabled(user.username.clone()).into());
        }
    }
    let current_lab = existing.as_ref().map(|u| u.lab.as_str());
    let admit::Placed { lab_id, lab, role, moved } =
        placed(&mut tx, &facts, &who.username, current_lab, &state.settings, ACTOR, now).await?;
    let mut user = match existing {
        Some(user) => user,
        None => {
            let detail = serde_json::json!({"lab": lab, "role": role.as_str()});
            let user = new_account(&mut tx, &who.username, (lab_id, role), SignIn::Oidc, (ACTOR, detail), now).await?;
            db::campus_identities::link(&mut tx, user.id, &who.issuer, &who.subject, now).await?;
            user
        }
    };
    let mut changed = in_step(&mut tx, &mut user, (lab_id, &lab), role, facts.ids).await?;
    if user.sign_in != SignIn::Oidc {
        changed.insert("auth".into(), serde_json::json!({"from": user.sign_in.as_str(), "to": "oidc"}));
        db::accounts::set_sign_in(&mut tx, user.id, SignIn::Oidc).await?;
    }
    if !changed.is_empty() {
        db::accounts::update_user(&mut tx, &user).await?;
        let detail = serde_json::Value::Object(changed);
        db::audit::record(&mut tx, ACTOR, "user.update", Some(&user.username), &detail, now).await?;
    }
    match &who.grant {
        Some(grant) => {
            db::campus_identities::set_grant(&mut tx, &who.issuer, &who.subject, Some(grant.secret())).await?;
        }
        // a person the provider cannot be asked about later is not let in
        // while it is (#42 I3: a sign-in stripped of offline_access kept
        // its access after the university dropped the person)
        None if provider_recheck_on(state) => {
            let stored = db::campus_identities::grant_of(&mut tx, &who.issuer, &who.subject).await?;
            if stored.as_deref().is_none_or(str::is_empty) {
                return Err(Refusal::NoGrant(user.username.clone()).into());
            }
        }
        None => {}
    }
    commit_with_uids(state, tx, user.id, moved).await
}

/// The account this identity signs into: the one linked to its (issuer,
/// `sub`). A name is never enough: an account of the provider's name that
/// is not linked refuses (an admin links it), as does a new name that
/// differs from an existing one only in case. The one exception is an
/// account campus sign-in made before identities were kept: its next
/// sign-in by its name links it (audited).
async fn account_of(tx: &mut db::WriteTx, who: &Identity, now: i64) -> Result<Option<UserRecord>, CampusError> {
    if let Some(id) = db::campus_identities::user_for(tx, &who.issuer, &who.subject).await? {
        return Ok(db::accounts::user_by_id(tx, id).await?);
    }
    let Some(user) = db::accounts::user_by_username(tx, &who.username).await? else {
        if let Some(other) = db::campus_identities::look_alike(tx, &who.username).await? {
            return Err(Refusal::LookAlike { name: who.username.clone(), other }.into());
        }
        return Ok(None);
    };
    if user.local {
        return Err(Refusal::Local(user.username).into());
    }
    let legacy = db::campus_identities::link_of(tx, user.id).await?.is_some_and(|l| l.subject.is_none());
    if !legacy {
        // the page tells the person their subject, for the admin who links it
        tracing::warn!(user = %user.username, issuer = %who.issuer, subject = %who.subject,
            "a university identity asked for an account it is not linked to: refused");
        return Err(Refusal::NotLinked { user: user.username, subject: who.subject.clone() }.into());
    }
    db::campus_identities::link(tx, user.id, &who.issuer, &who.subject, now).await?;
    let detail = serde_json::json!({"issuer": who.issuer, "subject": who.subject, "by": "its name, once"});
    db::audit::record(tx, ACTOR, "user.link", Some(&user.username), &detail, now).await?;
    Ok(Some(user))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn groups_give_the_lab_and_role() {
        let re = regex::Regex::new("^gpu-lab-(.+)$").unwrap();
        let admins = groups(&["gpu-admins"]);
        // (groups, the user's lab now, the lab and role they give)
        type Case<'a> = (&'a [&'a str], Option<&'a str>, Option<(&'a str, Role)>);
        let table: &[Case] = &[
            (&["gpu-lab-vision", "staff"], None, Some(("vision", Role::Researcher))),
            (&["gpu-lab-vision", "gpu-admins"], None, Some(("vision", Role::Admin))),
            (&["students"], None, None),
            (&["gpu-admins"], None, None),
            (&["gpu-lab-"], None, None),
            // two labs: the first by name, or the current one if kept
            (&["gpu-lab-nlp", "gpu-lab-audio"], None, Some(("audio", Role::Researcher))),
            (&["gpu-lab-nlp", "gpu-lab-audio"], Some("nlp"), Some(("nlp", Role::Researcher))),
            (&["gpu-lab-audio"], Some("nlp"), Some(("audio", Role::Researcher))),
            (&["xgpu-lab-vision"], None, None),
        ];
        for (given, current, expected) in table {
            let got = lab_and_role(&groups(given), &re, &admins, *current);
            let expected = expected.map(|(lab, role)| (lab.to_string(), role));
            assert_eq!(got, expected, "{given:?} (now in {current:?})");
        }
    }

    #[test]
    fn names_the_provider_gives_must_fit_ours() {
        assert!(valid_name("kim.minji"));
        assert!(!valid_name("kim minji"));
        assert!(!valid_name("*)(uid=*"));
        assert!(!valid_name(""));
        assert!(!valid_name(&"a".repeat(65)));
    }
}
