//! Labs, users and API tokens.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use app::model::Role;

/// A user as the auth layer needs them (defined beside the console's
/// backend trait, which carries it typed).
pub use app::api::principal::UserRecord;

pub struct NewUser<'a> {
    pub username: &'a str,
    /// Empty for users who sign in through the university (no password
    /// verifies against it).
    pub password_hash: &'a str,
    pub lab_id: i64,
    pub role: Role,
    pub unix_uid: Option<i64>,
    pub max_concurrent: i64,
    pub local: bool,
}

fn decode_role(s: &str) -> Result<Role, sqlx::Error> {
    s.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}

#[dual]
pub async fn insert_lab(conn: &mut WriteTx, name: &str, now_ms: i64) -> Result<i64, sqlx::Error> {
    let id = sqlx::query_scalar!(
        "INSERT INTO labs (name, usage_value, usage_as_of, created_at) VALUES (?, 0, ?, ?) RETURNING id AS \"id!: i64\"",
        name,
        now_ms,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?
    ;
    Ok(id)
}

#[dual]
pub async fn insert_user(conn: &mut WriteTx, user: NewUser<'_>, now_ms: i64) -> Result<i64, sqlx::Error> {
    let role = user.role.as_str();
    let local = i64::from(user.local);
    let id = sqlx::query_scalar!(
        "INSERT INTO users (username, password_hash, lab_id, role, unix_uid, max_concurrent, local, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id AS \"id!: i64\"",
        user.username,
        user.password_hash,
        user.lab_id,
        role,
        user.unix_uid,
        user.max_concurrent,
        local,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?;
    Ok(id)
}

#[dual]
pub async fn count_users(conn: &mut impl AsConn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "n!" FROM users"#).fetch_one(&mut *conn).await
}

/// The row behind [`UserRecord`], shared by the user look-ups.
struct UserRow {
    id: i64,
    username: String,
    password_hash: String,
    lab_id: i64,
    lab: String,
    role: String,
    unix_uid: Option<i64>,
    unix_gid: Option<i64>,
    unix_groups: Option<String>,
    allocated_uid: Option<i64>,
    max_concurrent: i64,
    disabled: bool,
    session_epoch: i64,
    auth: String,
    local: bool,
    locale: Option<String>,
}

impl TryFrom<UserRow> for UserRecord {
    type Error = sqlx::Error;
    fn try_from(r: UserRow) -> Result<Self, sqlx::Error> {
        Ok(UserRecord {
            id: r.id,
            username: r.username,
            password_hash: r.password_hash,
            lab_id: r.lab_id,
            lab: r.lab,
            role: decode_role(&r.role)?,
            unix_uid: r.unix_uid,
            unix_gid: r.unix_gid,
            unix_groups: r.unix_groups,
            allocated_uid: r.allocated_uid,
            max_concurrent: r.max_concurrent,
            disabled: r.disabled,
            session_epoch: r.session_epoch,
            sign_in: r.auth.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
            local: r.local,
            locale: r.locale,
        })
    }
}

#[dual]
pub async fn user_by_username(conn: &mut impl AsConn, username: &str) -> Result<Option<UserRecord>, sqlx::Error> {
    sqlx::query_as!(
        UserRow,
        r#"SELECT u.id AS "id!", u.username, u.password_hash, u.lab_id, l.name AS lab, u.role, u.unix_uid, u.unix_gid, u.unix_groups, u.allocated_uid, u.max_concurrent,
                  u.disabled_at IS NOT NULL AS "disabled!: bool", u.session_epoch, u.auth, u.local <> 0 AS "local!: bool", u.locale
           FROM users u JOIN labs l ON l.id = u.lab_id WHERE u.username = ?"#,
        username
    )
    .fetch_optional(&mut *conn)
    .await?
    .map(UserRecord::try_from)
    .transpose()
}

/// Every user, by lab then username (the admin pages' list).
#[dual]
pub async fn list_users(conn: &mut impl AsConn) -> Result<Vec<UserRecord>, sqlx::Error> {
    sqlx::query_as!(
        UserRow,
        r#"SELECT u.id AS "id!", u.username, u.password_hash, u.lab_id, l.name AS lab, u.role, u.unix_uid, u.unix_gid, u.unix_groups, u.allocated_uid, u.max_concurrent,
                  u.disabled_at IS NOT NULL AS "disabled!: bool", u.session_epoch, u.auth, u.local <> 0 AS "local!: bool", u.locale
           FROM users u JOIN labs l ON l.id = u.lab_id ORDER BY l.name, u.username"#
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(UserRecord::try_from)
    .collect()
}

/// Every lab's name, sorted.
#[dual]
pub async fn lab_names(conn: &mut impl AsConn) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT name FROM labs ORDER BY name").fetch_all(&mut *conn).await
}

#[dual]
pub async fn user_by_id(conn: &mut impl AsConn, id: i64) -> Result<Option<UserRecord>, sqlx::Error> {
    sqlx::query_as!(
        UserRow,
        r#"SELECT u.id AS "id!", u.username, u.password_hash, u.lab_id, l.name AS lab, u.role, u.unix_uid, u.unix_gid, u.unix_groups, u.allocated_uid, u.max_concurrent,
                  u.disabled_at IS NOT NULL AS "disabled!: bool", u.session_epoch, u.auth, u.local <> 0 AS "local!: bool", u.locale
           FROM users u JOIN labs l ON l.id = u.lab_id WHERE u.id = ?"#,
        id
    )
    .fetch_optional(&mut *conn)
    .await?
    .map(UserRecord::try_from)
    .transpose()
}

/// A token to store: whose, its hash, its name, the token it was made
/// with, and when it ends.
pub struct NewToken<'a> {
    pub user_id: i64,
    pub token_hash: &'a str,
    pub label: Option<&'a str>,
    pub parent: Option<i64>,
    pub expires_ms: i64,
}

#[dual]
pub async fn insert_token(conn: &mut WriteTx, new: NewToken<'_>, now_ms: i64) -> Result<i64, sqlx::Error> {
    let id = sqlx::query_scalar!(
        "INSERT INTO api_tokens (user_id, token_hash, label, parent_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id AS \"id!: i64\"",
        new.user_id,
        new.token_hash,
        new.label,
        new.parent,
        now_ms,
        new.expires_ms
    )
    .fetch_one(conn.conn())
    .await?
    ;
    Ok(id)
}

/// A live token as a request presents it.
pub struct LiveToken {
    pub id: i64,
    pub last_used_ms: Option<i64>,
    pub user: UserRecord,
}

/// The token that is neither revoked nor expired at `now_ms`, and its
/// owner, in one query (every API request asks this).
#[dual]
pub async fn user_by_live_token(
    conn: &mut impl AsConn,
    token_hash: &str,
    now_ms: i64,
) -> Result<Option<LiveToken>, sqlx::Error> {
    let Some(r) = sqlx::query!(
        r#"SELECT t.id AS "token_id!", t.last_used_at, u.id AS "id!", u.username, u.password_hash, u.lab_id, l.name AS lab, u.role,
                  u.unix_uid, u.unix_gid, u.unix_groups, u.allocated_uid, u.max_concurrent, u.session_epoch, u.auth, u.local <> 0 AS "local!: bool", u.locale
           FROM api_tokens t JOIN users u ON u.id = t.user_id JOIN labs l ON l.id = u.lab_id
           WHERE t.token_hash = ? AND t.revoked_at IS NULL AND t.expires_at > ? AND u.disabled_at IS NULL"#,
        token_hash,
        now_ms
    )
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let user = UserRow {
        id: r.id,
        username: r.username,
        password_hash: r.password_hash,
        lab_id: r.lab_id,
        lab: r.lab,
        role: r.role,
        unix_uid: r.unix_uid,
        unix_gid: r.unix_gid,
        unix_groups: r.unix_groups,
        allocated_uid: r.allocated_uid,
        max_concurrent: r.max_concurrent,
        disabled: false,
        session_epoch: r.session_epoch,
        auth: r.auth,
        local: r.local,
        locale: r.locale,
    };
    Ok(Some(LiveToken { id: r.token_id, last_used_ms: r.last_used_at, user: UserRecord::try_from(user)? }))
}

/// Notes a token's use (its owner's list shows when it was last used).
#[dual]
pub async fn touch_token(conn: &mut WriteTx, token_id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", now_ms, token_id).execute(conn.conn()).await?;
    Ok(())
}

#[dual]
pub async fn revoke_token(conn: &mut WriteTx, token_id: i64, now_ms: i64) -> Result<bool, sqlx::Error> {
    let done =
        sqlx::query!("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", now_ms, token_id)
            .execute(conn.conn())
            .await?;
    Ok(done.rows_affected() == 1)
}

/// A user's tokens that are neither revoked nor expired, newest first.
#[dual]
pub async fn live_tokens(
    conn: &mut impl AsConn,
    user_id: i64,
    now_ms: i64,
) -> Result<Vec<app::model::views::TokenView>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", label, created_at, expires_at, last_used_at FROM api_tokens
           WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY id DESC"#,
        user_id,
        now_ms
    )
    .fetch_all(&mut *conn)
    .await?;
    use crate::clock::rfc3339;
    Ok(rows
        .into_iter()
        .map(|r| app::model::views::TokenView {
            id: r.id,
            name: r.label,
            created_at: rfc3339(r.created_at),
            expires_at: rfc3339(r.expires_at),
            last_used_at: r.last_used_at.map(rfc3339),
        })
        .collect())
}

/// Whether a token of `user_id` is live: not revoked, not expired (a
/// disabled user's tokens are revoked with the disable).
#[dual]
pub async fn token_is_live(conn: &mut WriteTx, token_id: i64, user_id: i64, now_ms: i64) -> Result<bool, sqlx::Error> {
    let live = sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!: i64" FROM api_tokens
           WHERE id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?"#,
        token_id,
        user_id,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?;
    Ok(live > 0)
}

/// Whether the user is enabled and their sessions and tokens were not
/// ended since `epoch`.
#[dual]
pub async fn still_in_epoch(conn: &mut WriteTx, user_id: i64, epoch: i64) -> Result<bool, sqlx::Error> {
    let n = sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!: i64" FROM users WHERE id = ? AND session_epoch = ? AND disabled_at IS NULL"#,
        user_id,
        epoch
    )
    .fetch_one(conn.conn())
    .await?;
    Ok(n > 0)
}

/// How many named tokens (personal, device) of a user are live.
#[dual]
pub async fn live_named_tokens(conn: &mut WriteTx, user_id: i64, now_ms: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!" FROM api_tokens WHERE user_id = ? AND label IS NOT NULL AND revoked_at IS NULL AND expires_at > ?"#,
        user_id,
        now_ms
    )
    .fetch_one(conn.conn())
    .await
}

/// Revokes a live token — `owner`'s only, when given — and every token
/// made with it, down the line. False if there was no such live token.
#[dual]
pub async fn revoke_token_tree(
    conn: &mut WriteTx,
    owner: Option<i64>,
    token_id: i64,
    now_ms: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND (CAST(? AS BIGINT) IS NULL OR user_id = ?) AND revoked_at IS NULL",
        now_ms,
        token_id,
        owner,
        owner
    )
    .execute(conn.conn())
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query!(
        "WITH RECURSIVE made(id) AS (
             SELECT id FROM api_tokens WHERE parent_id = ?
             UNION SELECT t.id FROM api_tokens t JOIN made ON t.parent_id = made.id)
         UPDATE api_tokens SET revoked_at = ? WHERE id IN (SELECT id FROM made) AND revoked_at IS NULL",
        token_id,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(true)
}

#[dual]
pub async fn set_password(conn: &mut WriteTx, user_id: i64, password_hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE users SET password_hash = ? WHERE id = ?", password_hash, user_id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// Writes an existing user's role, lab, unix uid and gid and concurrency
/// limit.
#[dual]
pub async fn update_user(conn: &mut WriteTx, user: &UserRecord) -> Result<(), sqlx::Error> {
    let role = user.role.as_str();
    sqlx::query!(
        "UPDATE users SET role = ?, lab_id = ?, unix_uid = ?, unix_gid = ?, unix_groups = ?, max_concurrent = ? WHERE id = ?",
        role,
        user.lab_id,
        user.unix_uid,
        user.unix_gid,
        user.unix_groups,
        user.max_concurrent,
        user.id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The user (other than `except`) whose jobs run as `uid`, if any.
#[dual]
pub async fn user_with_uid(conn: &mut impl AsConn, uid: i64, except: i64) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT username FROM users WHERE (unix_uid = ? OR allocated_uid = ?) AND id != ? LIMIT 1",
        uid,
        uid,
        except
    )
    .fetch_optional(&mut *conn)
    .await
}

/// Gives every user who has neither a configured nor an allocated uid the
/// lowest uid of `first..=last` that no user has. Returns who got which;
/// users left without one mean the range ran out.
#[dual]
pub async fn allocate_uids(conn: &mut WriteTx, first: i64, last: i64) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let waiting = sqlx::query!(
        r#"SELECT id AS "id!", username FROM users WHERE unix_uid IS NULL AND allocated_uid IS NULL ORDER BY id"#
    )
    .fetch_all(conn.conn())
    .await?;
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    let used: std::collections::HashSet<i64> = sqlx::query_scalar!(
        r#"SELECT unix_uid AS "uid!" FROM users WHERE unix_uid IS NOT NULL
           UNION SELECT allocated_uid AS "uid!" FROM users WHERE allocated_uid IS NOT NULL"#
    )
    .fetch_all(conn.conn())
    .await?
    .into_iter()
    .collect();
    let mut free = (first..=last).filter(|uid| !used.contains(uid));
    let mut given = Vec::with_capacity(waiting.len());
    for user in waiting {
        let Some(uid) = free.next() else { break };
        sqlx::query!("UPDATE users SET allocated_uid = ? WHERE id = ?", uid, user.id).execute(conn.conn()).await?;
        given.push((user.username, uid));
    }
    Ok(given)
}

/// Ends every console session of the user (by moving their epoch on) and
/// revokes every live token but `keep`. Returns the new epoch, which the
/// session that made the change takes on to stay signed in.
#[dual]
pub async fn end_sessions_and_tokens(
    conn: &mut WriteTx,
    user_id: i64,
    keep: Option<i64>,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    let epoch = sqlx::query_scalar!(
        r#"UPDATE users SET session_epoch = session_epoch + 1 WHERE id = ? RETURNING session_epoch AS "epoch!: i64""#,
        user_id
    )
    .fetch_one(conn.conn())
    .await?;
    let keep = keep.unwrap_or(-1);
    sqlx::query!(
        "UPDATE api_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND id != ?",
        now_ms,
        user_id,
        keep
    )
    .execute(conn.conn())
    .await?;
    Ok(epoch)
}

/// Disables (or enables again) a user.
#[dual]
pub async fn set_disabled(conn: &mut WriteTx, user_id: i64, disabled: bool, now_ms: i64) -> Result<(), sqlx::Error> {
    let at = disabled.then_some(now_ms);
    sqlx::query!("UPDATE users SET disabled_at = ? WHERE id = ?", at, user_id).execute(conn.conn()).await?;
    Ok(())
}

/// Whether token `id` is neither revoked nor expired, and its user not
/// disabled.
#[dual]
pub async fn token_live(conn: &mut impl AsConn, id: i64, now_ms: i64) -> Result<bool, sqlx::Error> {
    let found = sqlx::query_scalar!(
        r#"SELECT t.id AS "id!" FROM api_tokens t JOIN users u ON u.id = t.user_id
           WHERE t.id = ? AND t.revoked_at IS NULL AND t.expires_at > ? AND u.disabled_at IS NULL"#,
        id,
        now_ms
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(found.is_some())
}

/// How a user signs in from now on (`password` → `oidc` when a user an
/// admin made first signs in through the university).
#[dual]
pub async fn set_sign_in(conn: &mut WriteTx, user_id: i64, how: app::model::SignIn) -> Result<(), sqlx::Error> {
    let how = how.as_str();
    sqlx::query!("UPDATE users SET auth = ? WHERE id = ?", how, user_id).execute(conn.conn()).await?;
    Ok(())
}

/// Keeps the console language a person chose.
#[dual]
pub async fn set_locale(conn: &mut WriteTx, user_id: i64, locale: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE users SET locale = ? WHERE id = ?", locale, user_id).execute(conn.conn()).await?;
    Ok(())
}
