//! Which provider identity (issuer, `sub`) an account is linked to. The
//! rules (who may link, when a name may) live in `services::campus` and
//! `services::admin::users`.

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

/// An account's link: `subject` `None` for an account campus sign-in made
/// before identities were kept (linked by its next sign-in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub issuer: String,
    pub subject: Option<String>,
}

/// The account linked to this identity.
#[dual]
pub async fn user_for(conn: &mut impl AsConn, issuer: &str, subject: &str) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT user_id AS "user_id!" FROM campus_identities WHERE issuer = ? AND subject = ?"#,
        issuer,
        subject
    )
    .fetch_optional(&mut *conn)
    .await
}

/// The identity an account is linked to, if any.
#[dual]
pub async fn link_of(conn: &mut impl AsConn, user_id: i64) -> Result<Option<Link>, sqlx::Error> {
    let row = sqlx::query!("SELECT issuer, subject FROM campus_identities WHERE user_id = ?", user_id)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row.map(|r| Link { issuer: r.issuer, subject: r.subject }))
}

/// Links the account to the identity (replacing its link). Fails with a
/// unique violation if another account has the identity.
#[dual]
pub async fn link(
    conn: &mut WriteTx,
    user_id: i64,
    issuer: &str,
    subject: &str,
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO campus_identities (user_id, issuer, subject, linked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET issuer = excluded.issuer, subject = excluded.subject,
                                             linked_at = excluded.linked_at, refresh_token = NULL",
        user_id,
        issuer,
        subject,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Removes the account's link: no identity signs into it until an admin
/// links one.
#[dual]
pub async fn unlink(conn: &mut WriteTx, user_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM campus_identities WHERE user_id = ?", user_id).execute(conn.conn()).await?;
    Ok(())
}

/// Another account whose name differs from `name` only in case (`Admin`
/// beside `admin`): people and logs cannot tell them apart.
#[dual]
pub async fn look_alike(conn: &mut impl AsConn, name: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT username FROM users WHERE lower(username) = lower(?) AND username != ? LIMIT 1",
        name,
        name
    )
    .fetch_optional(&mut *conn)
    .await
}

/// Campus users with jobs waiting to start: whom the off-boarding sweep
/// asks the directory about.
#[dual]
pub async fn campus_users_with_waiting_jobs(conn: &mut impl AsConn) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT DISTINCT u.id AS "id!" FROM users u JOIN jobs j ON j.user_id = u.id
           WHERE (u.auth = 'oidc' OR (u.auth = 'password' AND u.local = 0 AND u.password_hash = ''))
             AND u.disabled_at IS NULL AND j.state IN ('USER_QUEUE_WAIT', 'GLOBAL_QUEUE_WAIT')"#
    )
    .fetch_all(&mut *conn)
    .await
}

/// Keeps the provider's refresh token for this identity (`None` forgets it).
#[dual]
pub async fn set_grant(
    conn: &mut WriteTx,
    issuer: &str,
    subject: &str,
    refresh_token: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE campus_identities SET refresh_token = ? WHERE issuer = ? AND subject = ?",
        refresh_token,
        issuer,
        subject
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Replaces the account's refresh token with `ended` (a mark: no grant to
/// ask with until the person signs in again).
#[dual]
pub async fn end_grant(conn: &mut WriteTx, user_id: i64, ended: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE campus_identities SET refresh_token = ? WHERE user_id = ?", ended, user_id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// An identity the provider can be asked about again.
#[derive(Clone)]
pub struct Held {
    pub user_id: i64,
    pub subject: String,
    pub refresh_token: String,
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").field("user_id", &self.user_id).field("subject", &self.subject).finish_non_exhaustive()
    }
}

/// The refresh token kept for this identity (`""`: ended, none until the
/// person signs in again).
#[dual]
pub async fn grant_of(conn: &mut impl AsConn, issuer: &str, subject: &str) -> Result<Option<String>, sqlx::Error> {
    let row = sqlx::query_scalar!(
        "SELECT refresh_token FROM campus_identities WHERE issuer = ? AND subject = ?",
        issuer,
        subject
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.flatten())
}

/// Enabled campus accounts of this issuer (or linked by name, before
/// identities were kept) with no refresh token at all: the provider cannot
/// be asked about them.
#[dual]
pub async fn ungranted(conn: &mut impl AsConn, issuer: &str) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT c.user_id AS "user_id!" FROM campus_identities c JOIN users u ON u.id = c.user_id
           WHERE (c.issuer = ? OR c.subject IS NULL) AND c.refresh_token IS NULL
             AND u.auth = 'oidc' AND u.disabled_at IS NULL
           ORDER BY c.user_id"#,
        issuer
    )
    .fetch_all(&mut *conn)
    .await
}

/// The campus accounts of this issuer, still enabled, with a refresh
/// token: whom the provider re-check asks about.
#[dual]
pub async fn held_grants(conn: &mut impl AsConn, issuer: &str) -> Result<Vec<Held>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT c.user_id AS "user_id!", c.subject AS "subject!", c.refresh_token AS "refresh_token!"
           FROM campus_identities c JOIN users u ON u.id = c.user_id
           WHERE c.issuer = ? AND c.subject IS NOT NULL AND c.refresh_token IS NOT NULL AND c.refresh_token != ''
             AND u.auth = 'oidc' AND u.disabled_at IS NULL
           ORDER BY c.user_id"#,
        issuer
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Held { user_id: r.user_id, subject: r.subject, refresh_token: r.refresh_token })
        .collect())
}
