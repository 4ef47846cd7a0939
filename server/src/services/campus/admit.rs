//! Admitting someone the university vouched for, the steps both campus
//! sign-ins share (the provider's, `sign_in`, and the directory's
//! password, `password`): the lab and role their groups give (the lab made
//! when new), a new account with no password of its own, the account kept
//! in step with what the university says (each change returned for the
//! audit log), and uids handed out where the local executor needs them.

use app::model::{Role, SignIn};

use super::{lab_and_role, valid_name, CampusError, Facts, Refusal};
use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};

/// The lab and role `facts` give `username` (the lab made, audited by
/// `actor`, when new), or why they give none.
pub(super) async fn placed(
    tx: &mut db::WriteTx,
    facts: &Facts,
    username: &str,
    current_lab: Option<&str>,
    settings: &crate::config::Settings,
    actor: &str,
    now: i64,
) -> Result<Placed, CampusError> {
    let Some((lab, role)) = lab_and_role(&facts.groups, &facts.lab_group, &facts.admin_groups, current_lab) else {
        let pattern = facts.lab_group.as_str().to_string();
        return Err(Refusal::NoLabGroup { username: username.to_string(), pattern }.into());
    };
    if !valid_name(&lab) {
        return Err(Refusal::BadName(lab).into());
    }
    let lab_id = lab_id_of(tx, &lab, username, actor, now).await?;
    let moved = match facts.lab_gid(&lab) {
        Some(gid) => lab_gid_in_step(tx, lab_id, gid, settings, actor, now).await?,
        None => false,
    };
    Ok(Placed { lab_id, lab, role, moved })
}

/// Where the facts place someone.
pub(super) struct Placed {
    pub lab_id: i64,
    pub lab: String,
    pub role: Role,
    /// A lab's gid moved: the shares are brought in step after commit.
    pub moved: bool,
}

/// Makes `gid`, the lab's group's in the directory, the lab's gid (policy
/// §13: the share's group is the one the site's nodes give every member's
/// job). Refused (logged, the lab keeps its gid) when the number is one
/// the platform gives people as their own group (`executor.uid_range`),
/// when the lab already has another gid from the directory (two members'
/// entries disagree), or when another lab holds it from the directory. A
/// lab holding it from the platform's range moves off it (a new one is
/// handed out at commit), but only once none of its jobs is running: they
/// carry it, and would reach this lab's share (a later sign-in retries).
/// A gid a lab gives up is retired, never handed out again, and its
/// share's files are regrouped in the background. Returns whether any
/// lab's gid moved.
async fn lab_gid_in_step(
    tx: &mut db::WriteTx,
    lab_id: i64,
    gid: i64,
    settings: &crate::config::Settings,
    actor: &str,
    now: i64,
) -> Result<bool, CampusError> {
    let people_range = settings.executor.uid_range().ok();
    let Some(lab) = db::lab_gids::of_lab(tx, lab_id).await? else { return Ok(false) };
    if people_range.is_some_and(|(first, last)| (i64::from(first)..=i64::from(last)).contains(&gid)) {
        tracing::warn!(lab = %lab.name, gid, "a lab group's gidNumber lies in executor.uid_range (people's own groups): not taken");
        return Ok(false);
    }
    match lab.gid {
        Some(current) if current == gid => {
            if !lab.from_directory {
                db::lab_gids::set(tx, lab_id, Some(gid), true).await?;
            }
            return Ok(false);
        }
        Some(current) if lab.from_directory => {
            tracing::warn!(lab = %lab.name, current, other = gid,
                "the directory gives this lab's group two gidNumbers (members' entries disagree): the lab keeps its own");
            return Ok(false);
        }
        _ => {}
    }
    // a gid a lab gave up: its jobs still running carry it
    if let Some(retired_by) = db::lab_gids::retired_by(tx, gid).await? {
        if retired_by != lab_id && db::lab_gids::jobs_holding(tx, retired_by).await? > 0 {
            tracing::info!(lab = %lab.name, gid, "the lab's directory gid waits until the jobs of the lab that gave it up end");
            return Ok(false);
        }
    }
    if let Some(other) = db::lab_gids::holding(tx, gid, lab_id).await? {
        if other.from_directory {
            tracing::warn!(lab = %lab.name, other = %other.name, gid,
                "two labs' directory groups have one gidNumber: the lab keeps the gid it has");
            return Ok(false);
        }
        if db::lab_gids::jobs_holding(tx, other.id).await? > 0 {
            tracing::info!(lab = %lab.name, other = %other.name, gid,
                "the lab's directory gid waits until the jobs of the lab holding it end");
            return Ok(false);
        }
        // its share leaves the gid before the move commits (root's group
        // until its new gid is handed out): never a moment where this
        // lab's jobs carry the group of another lab's share
        let places = crate::executor::places::Places::new(&settings.storage.root);
        let name = other.name.clone();
        let moved = tokio::task::spawn_blocking(move || places.set_share_group(&name, None)).await;
        if !matches!(moved, Ok(Ok(()))) {
            tracing::warn!(lab = %lab.name, other = %other.name, ?moved,
                "the lab holding the directory's gid could not leave it on its share: the move waits");
            return Ok(false);
        }
        db::lab_gids::set(tx, other.id, None, false).await?;
        db::lab_gids::add_regroup(tx, other.id, gid, now).await?;
        let detail = serde_json::json!({"unix_gid": {"from": gid, "to": null}, "because": lab.name});
        db::audit::record(tx, actor, "lab.update", Some(&other.name), &detail, now).await?;
    }
    if let Some(old) = lab.gid {
        db::lab_gids::retire(tx, old, lab_id, now).await?;
        db::lab_gids::add_regroup(tx, lab_id, old, now).await?;
    }
    db::lab_gids::set(tx, lab_id, Some(gid), true).await?;
    let detail = serde_json::json!({"unix_gid": {"from": lab.gid, "to": gid}, "from": "the directory"});
    db::audit::record(tx, actor, "lab.update", Some(&lab.name), &detail, now).await?;
    Ok(true)
}

/// An account the university's sign-in makes: no password of its own,
/// signing in as `kind`, its creation audited (`actor`, `detail`).
pub(super) async fn new_account(
    tx: &mut db::WriteTx,
    username: &str,
    (lab_id, role): (i64, Role),
    kind: SignIn,
    (actor, detail): (&str, serde_json::Value),
    now: i64,
) -> Result<UserRecord, CampusError> {
    let new = db::accounts::NewUser {
        username,
        // never a usable hash: the university holds the password
        password_hash: "",
        lab_id,
        role,
        unix_uid: None,
        max_concurrent: crate::policy::personal::DEFAULT_CONCURRENCY,
        local: false,
    };
    let id = db::accounts::insert_user(tx, new, now).await?;
    db::accounts::set_sign_in(tx, id, kind).await?;
    db::audit::record(tx, actor, "user.create", Some(username), &detail, now).await?;
    Ok(db::accounts::user_by_id(tx, id)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("user {id} vanished inside its own transaction")))?)
}

/// Hands out uids where the local executor needs them (no directory
/// uid) and commits; the account as it now is.
pub(super) async fn commit_with_uids(
    state: &Services,
    mut tx: db::WriteTx,
    id: i64,
    gid_moved: bool,
) -> Result<UserRecord, CampusError> {
    crate::services::admin::allocate_uids(&state.settings, &mut tx).await?;
    let user = db::accounts::user_by_id(&mut tx, id)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("user {id} vanished inside its own transaction")))?;
    tx.commit().await?;
    if gid_moved {
        // the shares' files are regrouped in the background
        state.lab_regroups.notify_one();
    }
    Ok(user)
}

/// The lab's id, the lab made (and audited, by `actor`) when new.
pub(super) async fn lab_id_of(
    tx: &mut db::WriteTx,
    lab: &str,
    username: &str,
    actor: &str,
    now: i64,
) -> Result<i64, CampusError> {
    Ok(match db::views::lab_id(tx, lab).await? {
        Some(id) => id,
        None => {
            let id = db::accounts::insert_lab(tx, lab, now).await?;
            let detail = serde_json::json!({"from_group_of": username});
            db::audit::record(tx, actor, "lab.create", Some(lab), &detail, now).await?;
            id
        }
    })
}

/// Brings the user's lab, role and ids in step with what the directory
/// (or the provider) says; returns what changed, for the audit log (the
/// caller saves the row when anything did).
pub(super) async fn in_step(
    tx: &mut db::WriteTx,
    user: &mut UserRecord,
    (lab_id, lab): (i64, &str),
    role: Role,
    ids: Option<(Option<i64>, Option<i64>, Vec<i64>)>,
) -> Result<serde_json::Map<String, serde_json::Value>, CampusError> {
    let mut changed = serde_json::Map::new();
    let mut note = |field: &str, from: serde_json::Value, to: serde_json::Value| {
        if from != to {
            changed.insert(field.into(), serde_json::json!({"from": from, "to": to}));
        }
    };
    note("lab", user.lab.clone().into(), lab.into());
    note("role", user.role.as_str().into(), role.as_str().into());
    if let Some((uid, gid, group_gids)) = ids {
        if let Some(uid) = uid {
            if let Some(other) = db::accounts::user_with_uid(tx, uid, user.id).await? {
                return Err(Refusal::UidTaken { uid, other }.into());
            }
        }
        note("unix_uid", user.unix_uid.into(), uid.into());
        note("unix_gid", user.unix_gid.into(), gid.into());
        let groups =
            (!group_gids.is_empty()).then(|| group_gids.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
        note("unix_groups", user.unix_groups.clone().into(), groups.clone().into());
        user.unix_uid = uid;
        user.unix_gid = gid;
        user.unix_groups = groups;
    }
    user.lab_id = lab_id;
    user.lab = lab.to_string();
    user.role = role;
    Ok(changed)
}
