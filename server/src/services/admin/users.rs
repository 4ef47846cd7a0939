//! Admin actions on maintenance, labs and users (create, change, disable,
//! uid allocation), and the lists the admin pages and API show of them.
//! Each change is audited in its own transaction and wakes the scheduler.

use app::model::{MaintenancePhase, MaintenanceView};
use app::msg;
use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::{now_ms, rfc3339};
use app::model::admin::UserView;

use crate::db;
use crate::services::{ServiceError, Services};

pub const MAX_MESSAGE: usize = 500;

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
pub enum MaintenanceAction {
    Start {
        #[schema(max_length = 500)]
        message: Option<String>,
    },
    End,
}

/// Starts maintenance (NORMAL → DRAINING; the scheduler advances it to
/// BACKFILL_RECOVERY and ACTIVE by itself) or ends it (→ NORMAL).
pub async fn maintenance(
    state: &Services,
    admin: &Caller,
    action: MaintenanceAction,
) -> Result<MaintenanceView, ServiceError> {
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let current = db::maintenance::get(&mut tx).await?;
    let (phase, message, audit_action) = match &action {
        MaintenanceAction::Start { message } => {
            if current.phase != MaintenancePhase::Normal {
                return Err(ServiceError::Conflict(msg!("err-maintenance-on", phase = current.phase.to_string())));
            }
            let message = message.as_deref().map(str::trim).filter(|m| !m.is_empty());
            if message.is_some_and(|m| m.chars().count() > MAX_MESSAGE) {
                return Err(ServiceError::field("message", msg!("err-chars-max", max = MAX_MESSAGE)));
            }
            (MaintenancePhase::Draining, message.map(str::to_string), "maintenance.start")
        }
        MaintenanceAction::End => {
            if current.phase == MaintenancePhase::Normal {
                return Err(ServiceError::Conflict(msg!("err-maintenance-off")));
            }
            (MaintenancePhase::Normal, None, "maintenance.end")
        }
    };
    db::maintenance::set(&mut tx, phase, message.as_deref(), now).await?;
    let detail = serde_json::json!({"from": current.phase.as_str(), "to": phase.as_str(), "message": message});
    db::audit::record(&mut tx, &admin.user.username, audit_action, None, &detail, now).await?;
    tx.commit().await?;
    state.wake_scheduler();
    Ok(MaintenanceView { phase, message, since: rfc3339(now) })
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLabBody {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub name: String,
}

#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct LabCreated {
    pub name: String,
}

/// Names of labs and users: 1–64 of `a-z A-Z 0-9 . _ -`, not starting with
/// a dot (a name is a folder too: `home/NAME`, `labs/NAME`; `..` is none).
pub(crate) fn check_name(field: &'static str, name: &str) -> Result<(), ServiceError> {
    let ok = (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ServiceError::field(field, msg!("err-plain-name")))
    }
}

pub async fn create_lab(state: &Services, admin: &Caller, body: NewLabBody) -> Result<LabCreated, ServiceError> {
    check_name("name", &body.name)?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    db::accounts::insert_lab(&mut tx, &body.name, now)
        .await
        .map_err(|e| ServiceError::unique(e, msg!("err-lab-exists", name = &body.name)))?;
    db::audit::record(&mut tx, &admin.user.username, "lab.create", Some(&body.name), &serde_json::json!({}), now)
        .await?;
    tx.commit().await?;
    Ok(LabCreated { name: body.name })
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUserBody {
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,64}$")]
    pub username: String,
    #[schema(min_length = 10, max_length = 1024)]
    pub password: String,
    pub lab: String,
    pub role: app::model::Role,
    #[schema(minimum = 1000, maximum = 2147483647)]
    pub unix_uid: Option<i64>,
    /// Default 2.
    #[schema(minimum = 0, maximum = 64)]
    pub max_concurrent: Option<i64>,
    /// May sign in with a password even when `auth.passwords` is off (a
    /// break-glass account). Default false.
    pub local: Option<bool>,
    /// The university identity (its `sub` at `auth.oidc.issuer`) whose
    /// campus sign-in opens this account. Without it none does: a name
    /// the provider sends never claims an existing account.
    #[schema(min_length = 1, max_length = 255)]
    pub campus_subject: Option<String>,
}

pub const MIN_PASSWORD: usize = 10;

/// The end reason of a waiting job whose owner an admin disabled.
pub const OWNER_DISABLED: &str = "OWNER_DISABLED";

pub async fn create_user(
    state: &Services,
    admin: &Caller,
    body: NewUserBody,
) -> Result<app::model::Viewer, ServiceError> {
    check_name("username", &body.username)?;
    if body.password.chars().count() < MIN_PASSWORD || body.password.len() > 1024 {
        return Err(ServiceError::field("password", msg!("err-password-length", min = MIN_PASSWORD)));
    }
    check_uid(body.unix_uid)?;
    let max_concurrent = body.max_concurrent.unwrap_or(crate::policy::personal::DEFAULT_CONCURRENCY);
    check_max_concurrent(max_concurrent)?;
    let hash = crate::auth::password::hash_password(body.password.clone())
        .await
        .map_err(|e| ServiceError::Internal(format!("hashing the password: {e}")))?;
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let lab_id = db::views::lab_id(&mut tx, &body.lab)
        .await?
        .ok_or_else(|| ServiceError::field("lab", msg!("err-no-lab", name = &body.lab)))?;
    let user = db::accounts::NewUser {
        username: &body.username,
        password_hash: &hash,
        lab_id,
        role: body.role,
        unix_uid: body.unix_uid,
        max_concurrent,
        local: body.local.unwrap_or(false),
    };
    super::campus_link::refuse_look_alike(&mut tx, "username", &body.username).await?;
    let id = db::accounts::insert_user(&mut tx, user, now)
        .await
        .map_err(|e| ServiceError::unique(e, msg!("err-user-exists", name = &body.username)))?;
    check_uid_free(&mut tx, body.unix_uid, id).await?;
    if let Some(subject) = &body.campus_subject {
        let record = db::accounts::user_by_id(&mut tx, id)
            .await?
            .ok_or_else(|| ServiceError::Internal(format!("user {id} vanished inside its own transaction")))?;
        super::campus_link::set_link(state, &mut tx, &record, Some(subject), now).await?;
    }
    allocate_uids(&state.settings, &mut tx).await?;
    let detail = serde_json::json!({"lab": body.lab, "role": body.role.as_str(), "unix_uid": body.unix_uid, "max_concurrent": max_concurrent, "local": body.local.unwrap_or(false), "campus_subject": body.campus_subject});
    db::audit::record(&mut tx, &admin.user.username, "user.create", Some(&body.username), &detail, now).await?;
    let created = db::accounts::user_by_id(&mut tx, id)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("user {id} vanished inside its own transaction")))?;
    tx.commit().await?;
    // who reads the lab's datasets on disk changed
    state.dataset_readers.notify_one();
    Ok(created.viewer())
}

fn check_uid(uid: Option<i64>) -> Result<(), ServiceError> {
    if uid.is_some_and(|u| !(1000..=i64::from(u32::MAX >> 1)).contains(&u)) {
        return Err(ServiceError::field("unix_uid", msg!("err-uid-regular")));
    }
    Ok(())
}

/// Two users never share a uid (policy §8): one could read and kill the
/// other's jobs.
async fn check_uid_free(conn: &mut impl crate::db::AsConn, uid: Option<i64>, user_id: i64) -> Result<(), ServiceError> {
    let Some(uid) = uid else { return Ok(()) };
    match db::accounts::user_with_uid(conn, uid, user_id).await? {
        Some(other) => Err(ServiceError::Conflict(msg!("err-uid-taken", uid = uid, other = other))),
        None => Ok(()),
    }
}

/// Gives users without a configured uid one of their own from
/// `executor.uid_range` (the local executor only: Slurm's nodes know users
/// from the site's directory, so there a configured uid is required).
pub async fn allocate_uids(settings: &crate::config::Settings, conn: &mut db::WriteTx) -> Result<(), ServiceError> {
    // every lab a gid of its own: its share's group (policy §13)
    let (first, last) = settings.storage.lab_gid_range().map_err(ServiceError::Internal)?;
    // never a group this host knows (a directory's, through NSS), nor a
    // uid a job runs as (whose own group has that number)
    let (uid_first, uid_last) = settings.executor.uid_range().unwrap_or((0, 0));
    let taken = |gid: i64| {
        (i64::from(uid_first)..=i64::from(uid_last)).contains(&gid)
            || nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid as u32)).ok().flatten().is_some()
    };
    for (lab, gid) in db::lab_gids::allocate(conn, first.into(), last.into(), taken).await? {
        tracing::info!(lab, gid, "allocated a unix gid of its own to a lab without one");
    }
    if settings.executor.kind != crate::config::ExecutorKind::Local {
        return Ok(());
    }
    let (first, last) = settings.executor.uid_range().map_err(ServiceError::Internal)?;
    for (user, uid) in db::accounts::allocate_uids(conn, first.into(), last.into()).await? {
        tracing::info!(user, uid, "allocated a unix uid of its own to a user without one");
    }
    Ok(())
}

fn check_max_concurrent(n: i64) -> Result<(), ServiceError> {
    if !(0..=64).contains(&n) {
        return Err(ServiceError::field("max_concurrent", msg!("err-between", min = 0u32, max = 64u32)));
    }
    Ok(())
}

/// `PATCH /v1/admin/users/{username}`: each field optional. `unix_uid:
/// null` clears the configured uid (jobs then run as the user's allocated
/// one); `password` resets it.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserPatch {
    pub lab: Option<String>,
    pub role: Option<app::model::Role>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1000, maximum = 2147483647)]
    pub unix_uid: Option<Option<i64>>,
    #[schema(minimum = 0, maximum = 64)]
    pub max_concurrent: Option<i64>,
    #[schema(min_length = 10, max_length = 1024)]
    pub password: Option<String>,
    /// `true` refuses the user's sign-ins and ends their sessions and
    /// tokens at once (running jobs keep running, queued ones stay);
    /// `false` lets them sign in again.
    pub disabled: Option<bool>,
    /// Links the account to this university identity (its `sub` at
    /// `auth.oidc.issuer`); `null` removes the link (then no campus
    /// sign-in opens the account).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub campus_subject: Option<Option<String>>,
}

/// Tells an absent field (None) from an explicit null (Some(None)).
fn present<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

pub async fn update_user(
    state: &Services,
    admin: &Caller,
    username: &str,
    patch: UserPatch,
) -> Result<app::model::Viewer, ServiceError> {
    if let Some(uid) = patch.unix_uid {
        check_uid(uid)?;
    }
    if let Some(n) = patch.max_concurrent {
        check_max_concurrent(n)?;
    }
    let hash = match &patch.password {
        Some(p) if p.chars().count() < MIN_PASSWORD || p.len() > 1024 => {
            return Err(ServiceError::field("password", msg!("err-password-length", min = MIN_PASSWORD)));
        }
        Some(p) => Some(
            crate::auth::password::hash_password(p.clone())
                .await
                .map_err(|e| ServiceError::Internal(format!("hashing the password: {e}")))?,
        ),
        None => None,
    };
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let mut user = db::accounts::user_by_username(&mut tx, username)
        .await?
        .ok_or_else(|| ServiceError::NotFound(msg!("err-no-user", name = username)))?;
    // an account a directory sign-in made signs in with the directory's
    // password: one set here would never be asked for
    if patch.password.is_some() && user.directory_made() {
        return Err(ServiceError::field("password", msg!("err-password-university", user = username)));
    }
    // the university owns what it keeps in step at every sign-in
    if user.campus_owned() {
        let owned =
            [("lab", patch.lab.is_some()), ("role", patch.role.is_some()), ("unix_uid", patch.unix_uid.is_some())];
        if let Some((field, _)) = owned.iter().find(|(_, given)| *given) {
            return Err(ServiceError::field(field, msg!("err-campus-owned", user = username)));
        }
    }
    if user.id == admin.user.id && patch.role == Some(app::model::Role::Researcher) {
        return Err(ServiceError::Conflict(msg!("err-self-demote")));
    }
    if let Some(lab) = &patch.lab {
        user.lab_id = db::views::lab_id(&mut tx, lab)
            .await?
            .ok_or_else(|| ServiceError::field("lab", msg!("err-no-lab", name = lab)))?;
        user.lab = lab.clone();
    }
    if let Some(role) = patch.role {
        user.role = role;
    }
    if let Some(uid) = patch.unix_uid {
        check_uid_free(&mut tx, uid, user.id).await?;
        user.unix_uid = uid;
    }
    if let Some(n) = patch.max_concurrent {
        user.max_concurrent = n;
    }
    if patch.disabled == Some(true) && user.id == admin.user.id {
        return Err(ServiceError::Conflict(msg!("err-self-disable")));
    }
    db::accounts::update_user(&mut tx, &user).await?;
    let link = match &patch.campus_subject {
        Some(subject) => Some(super::campus_link::set_link(state, &mut tx, &user, subject.as_deref(), now).await?),
        None => None,
    };
    allocate_uids(&state.settings, &mut tx).await?;
    if let Some(hash) = &hash {
        db::accounts::set_password(&mut tx, user.id, hash).await?;
    }
    if let Some(disabled) = patch.disabled {
        db::accounts::set_disabled(&mut tx, user.id, disabled, now).await?;
    }
    // a disabled user's waiting jobs never start (their running ones go
    // on): they end CANCELLED, OWNER_DISABLED, in this transaction, so no
    // cycle can start one after the answer
    let ended_waiting =
        if patch.disabled == Some(true) { db::jobs::waiting_of_user(&mut tx, user.id).await? } else { Vec::new() };
    for job in &ended_waiting {
        db::jobs::cancel_for(&mut tx, *job, now, OWNER_DISABLED).await?;
    }
    // a reset password or a disabled account: whoever held the old
    // credentials is out, everywhere, now (an admin resetting their own
    // keeps the credential they are using, as a password change does)
    if hash.is_some() || patch.disabled == Some(true) {
        let keep = admin.token_id.filter(|_| user.id == admin.user.id);
        db::accounts::end_sessions_and_tokens(&mut tx, user.id, keep, now).await?;
    }
    let detail = serde_json::json!({
        "lab": patch.lab, "role": patch.role.map(|r| r.as_str()), "unix_uid": patch.unix_uid,
        "max_concurrent": patch.max_concurrent, "password_reset": hash.is_some(), "disabled": patch.disabled,
        "waiting_jobs_cancelled": ended_waiting, "campus_subject": link,
    });
    db::audit::record(&mut tx, &admin.user.username, "user.update", Some(username), &detail, now).await?;
    tx.commit().await?;
    state.wake_scheduler();
    state.dataset_readers.notify_one();
    Ok(user.viewer())
}

/// Every user as the admin pages and `GET /v1/admin/users` list them.
pub async fn users(state: &Services) -> Result<Vec<UserView>, ServiceError> {
    let rows = db::accounts::list_users(&mut state.db.acquire().await?).await?;
    Ok(rows
        .into_iter()
        .map(|u| UserView {
            username: u.username,
            lab: u.lab,
            role: u.role,
            unix_uid: u.unix_uid,
            allocated_uid: u.allocated_uid,
            max_concurrent: u.max_concurrent,
            disabled: u.disabled,
            local: u.local,
            university: u.sign_in == app::model::SignIn::Oidc,
        })
        .collect())
}

/// Every lab's name, in order.
pub async fn lab_names(state: &Services) -> Result<Vec<String>, ServiceError> {
    Ok(db::accounts::lab_names(&mut state.db.acquire().await?).await?)
}
