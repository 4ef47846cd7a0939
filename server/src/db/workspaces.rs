//! Workspace rows: a lab's named container image (base image + packages),
//! its build status and log. The builder in `crate::services::workspaces` writes the
//! outcome; jobs name a workspace of their own lab.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;

#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceRow {
    pub name: String,
    pub lab: String,
    pub base_image: String,
    pub packages_json: String,
    pub status: String,
    pub image_path: Option<String>,
    pub build_log: String,
    pub created_at_ms: i64,
}

/// Inserts a BUILDING workspace, or restarts the build of a FAILED one of
/// the same name. Returns false when the name is taken by a workspace
/// that is building or ready.
#[dual]
pub async fn upsert_building(
    conn: &mut WriteTx,
    lab_id: i64,
    name: &str,
    base_image: &str,
    packages_json: &str,
    now_ms: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "INSERT INTO workspaces (name, lab_id, base_image, packages, status, build_log, created_at)
         VALUES (?, ?, ?, ?, 'BUILDING', '', ?)
         ON CONFLICT (lab_id, name) DO UPDATE SET
             base_image = excluded.base_image, packages = excluded.packages, status = 'BUILDING',
             image_path = NULL, build_log = '', created_at = excluded.created_at
         WHERE workspaces.status = 'FAILED'",
        name,
        lab_id,
        base_image,
        packages_json,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// What the workspace caps look at: `(the lab's workspaces other than
/// `name`, the lab's building one if any, builds running on the server)`.
#[dual]
pub async fn counts(
    conn: &mut impl AsConn,
    lab_id: i64,
    name: &str,
) -> Result<(i64, Option<String>, i64), sqlx::Error> {
    let r = sqlx::query!(
        r#"SELECT (SELECT COUNT(*) FROM workspaces WHERE lab_id = ? AND name != ?) AS "others!: i64",
                  (SELECT name FROM workspaces WHERE lab_id = ? AND status = 'BUILDING' LIMIT 1) AS "building?: String",
                  (SELECT COUNT(*) FROM workspaces WHERE status = 'BUILDING') AS "running!: i64""#,
        lab_id,
        name,
        lab_id
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok((r.others, r.building, r.running))
}

/// A lab's workspaces (every lab's when `lab` is None), by lab then name.
#[dual]
pub async fn list(conn: &mut impl AsConn, lab: Option<&str>) -> Result<Vec<WorkspaceRow>, sqlx::Error> {
    sqlx::query_as!(
        WorkspaceRow,
        r#"SELECT w.name, l.name AS lab, w.base_image, w.packages AS packages_json, w.status, w.image_path, w.build_log,
                  w.created_at AS created_at_ms
           FROM workspaces w JOIN labs l ON l.id = w.lab_id
           WHERE CAST(? AS TEXT) IS NULL OR l.name = ?
           ORDER BY l.name, w.name"#,
        lab,
        lab
    )
    .fetch_all(&mut *conn)
    .await
}

#[dual]
pub async fn get(conn: &mut impl AsConn, lab: &str, name: &str) -> Result<Option<WorkspaceRow>, sqlx::Error> {
    sqlx::query_as!(
        WorkspaceRow,
        r#"SELECT w.name, l.name AS lab, w.base_image, w.packages AS packages_json, w.status, w.image_path, w.build_log,
                  w.created_at AS created_at_ms
           FROM workspaces w JOIN labs l ON l.id = w.lab_id
           WHERE l.name = ? AND w.name = ?"#,
        lab,
        name
    )
    .fetch_optional(&mut *conn)
    .await
}

/// Records how a build ended (READY with its image, or FAILED).
#[dual]
pub async fn finish_build(
    conn: &mut WriteTx,
    lab: &str,
    name: &str,
    status: &str,
    image_path: Option<&str>,
    build_log: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE workspaces SET status = ?, image_path = ?, build_log = ?
         WHERE name = ? AND lab_id = (SELECT id FROM labs WHERE name = ?) AND status = 'BUILDING'",
        status,
        image_path,
        build_log,
        name,
        lab
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Builds that were running when the server stopped cannot be resumed:
/// they are marked FAILED so their owners can start them again.
#[dual]
pub async fn fail_interrupted(conn: &mut WriteTx) -> Result<u64, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE workspaces SET status = 'FAILED',
             build_log = build_log || '\n[jpu-share] the server stopped during this build; create the workspace again to rebuild it\n'
         WHERE status = 'BUILDING'"
    )
    .execute(conn.conn())
    .await?;
    Ok(done.rows_affected())
}
