//! Datasets and data requests (`datasets`, `data_requests`; the rules are
//! in `services::datasets`).

use db_macros::dual;

use super::AsConn;

use super::WriteTx;

#[derive(Debug, Clone)]
pub struct DatasetRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    /// JSON array of lab names; None = every lab.
    pub labs: Option<String>,
    pub source_path: Option<String>,
    pub source_url: Option<String>,
    pub sha256: Option<String>,
    pub state: String,
    pub size_bytes: i64,
    pub fetch_log: String,
    pub request_id: Option<i64>,
    pub created_at: i64,
}

#[dual]
pub async fn list(conn: &mut impl AsConn) -> Result<Vec<DatasetRow>, sqlx::Error> {
    sqlx::query_as!(
        DatasetRow,
        r#"SELECT id AS "id!", name, description, labs, source_path, source_url, sha256, state, size_bytes, fetch_log,
                  request_id, created_at FROM datasets ORDER BY name"#
    )
    .fetch_all(&mut *conn)
    .await
}

#[dual]
pub async fn by_name(conn: &mut impl AsConn, name: &str) -> Result<Option<DatasetRow>, sqlx::Error> {
    sqlx::query_as!(
        DatasetRow,
        r#"SELECT id AS "id!", name, description, labs, source_path, source_url, sha256, state, size_bytes, fetch_log,
                  request_id, created_at FROM datasets WHERE name = ?"#,
        name
    )
    .fetch_optional(&mut *conn)
    .await
}

/// A new dataset (`FETCHING` for a URL, `READY` for a folder).
#[allow(clippy::too_many_arguments)]
#[dual]
pub async fn insert(
    conn: &mut WriteTx,
    name: &str,
    description: &str,
    labs: Option<&str>,
    source_path: Option<&str>,
    source_url: Option<&str>,
    sha256: Option<&str>,
    request_id: Option<i64>,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    let state = if source_url.is_some() { "FETCHING" } else { "READY" };
    let row = sqlx::query!(
        "INSERT INTO datasets (name, description, labs, source_path, source_url, sha256, state, request_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        name,
        description,
        labs,
        source_path,
        source_url,
        sha256,
        state,
        request_id,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?;
    Ok(row.id)
}

#[dual]
pub async fn set_labs(conn: &mut WriteTx, id: i64, labs: Option<&str>) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE datasets SET labs = ? WHERE id = ?", labs, id).execute(conn.conn()).await?;
    Ok(())
}

#[dual]
pub async fn set_description(conn: &mut WriteTx, id: i64, description: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE datasets SET description = ? WHERE id = ?", description, id).execute(conn.conn()).await?;
    Ok(())
}

/// A fetch's end: `READY` (with its size and checksum) or `FAILED`.
#[dual]
pub async fn finish(
    conn: &mut WriteTx,
    id: i64,
    state: &str,
    size_bytes: i64,
    sha256: Option<&str>,
    log: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE datasets SET state = ?, size_bytes = ?, sha256 = COALESCE(?, sha256), fetch_log = ? WHERE id = ?",
        state,
        size_bytes,
        sha256,
        log,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

#[dual]
pub async fn delete(conn: &mut WriteTx, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM datasets WHERE id = ?", id).execute(conn.conn()).await?;
    Ok(())
}

/// The labs (of their owners now) of jobs that run: whose jobs may have a
/// dataset in view.
#[dual]
pub async fn labs_running(conn: &mut impl AsConn) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT DISTINCT l.name AS "name!" FROM jobs j JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = u.lab_id
           WHERE j.state = 'RUNNING'"#
    )
    .fetch_all(&mut *conn)
    .await
}

#[derive(Debug, Clone)]
pub struct RequestRow {
    pub id: i64,
    pub name: String,
    pub url: String,
    pub sha256: Option<String>,
    pub reason: String,
    pub user_id: i64,
    pub user: String,
    pub lab: String,
    pub state: String,
    pub decided_by: Option<String>,
    pub decision_reason: Option<String>,
    pub message: Option<String>,
    pub created_at: i64,
}

/// Requests, newest first: one lab's, or every lab's (`None`).
#[dual]
pub async fn requests(conn: &mut impl AsConn, lab_id: Option<i64>) -> Result<Vec<RequestRow>, sqlx::Error> {
    sqlx::query_as!(
        RequestRow,
        r#"SELECT r.id AS "id!", r.name, r.url, r.sha256, r.reason, r.user_id, u.username AS user, l.name AS lab, r.state,
                  d.username AS "decided_by?", r.decision_reason, r.message, r.created_at
           FROM data_requests r JOIN users u ON u.id = r.user_id JOIN labs l ON l.id = r.lab_id
                LEFT JOIN users d ON d.id = r.decided_by
           WHERE CAST(?1 AS BIGINT) IS NULL OR r.lab_id = ?1 ORDER BY r.id DESC LIMIT 500"#,
        lab_id
    )
    .fetch_all(&mut *conn)
    .await
}

#[dual]
pub async fn request(conn: &mut impl AsConn, id: i64) -> Result<Option<RequestRow>, sqlx::Error> {
    sqlx::query_as!(
        RequestRow,
        r#"SELECT r.id AS "id!", r.name, r.url, r.sha256, r.reason, r.user_id, u.username AS user, l.name AS lab, r.state,
                  d.username AS "decided_by?", r.decision_reason, r.message, r.created_at
           FROM data_requests r JOIN users u ON u.id = r.user_id JOIN labs l ON l.id = r.lab_id
                LEFT JOIN users d ON d.id = r.decided_by
           WHERE r.id = ?"#,
        id
    )
    .fetch_optional(&mut *conn)
    .await
}

/// Open requests of a user (a flood is refused).
#[dual]
pub async fn open_requests_of(conn: &mut impl AsConn, user_id: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!: i64" FROM data_requests WHERE user_id = ? AND state = 'OPEN'"#,
        user_id
    )
    .fetch_one(&mut *conn)
    .await
}

#[allow(clippy::too_many_arguments)]
#[dual]
pub async fn insert_request(
    conn: &mut WriteTx,
    name: &str,
    url: &str,
    sha256: Option<&str>,
    reason: &str,
    user_id: i64,
    lab_id: i64,
    now_ms: i64,
) -> Result<i64, sqlx::Error> {
    let row = sqlx::query!(
        r#"INSERT INTO data_requests (name, url, sha256, reason, user_id, lab_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           RETURNING id AS "id!: i64""#,
        name,
        url,
        sha256,
        reason,
        user_id,
        lab_id,
        now_ms
    )
    .fetch_one(conn.conn())
    .await?;
    Ok(row.id)
}

/// An admin's decision on an `OPEN` request; false when it was no longer
/// open.
#[dual]
pub async fn decide(
    conn: &mut WriteTx,
    id: i64,
    state: &str,
    by: i64,
    reason: Option<&str>,
    now_ms: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE data_requests SET state = ?, decided_by = ?, decision_reason = ?, decided_at = ? WHERE id = ? AND state = 'OPEN'",
        state,
        by,
        reason,
        now_ms,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A fetch's end for the request it came from.
#[dual]
pub async fn set_request_state(
    conn: &mut WriteTx,
    id: i64,
    state: &str,
    message: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE data_requests SET state = ?, message = ? WHERE id = ?", state, message, id)
        .execute(conn.conn())
        .await?;
    Ok(())
}

/// Every lab's name.
#[dual]
pub async fn lab_names(conn: &mut impl AsConn) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT name FROM labs ORDER BY name").fetch_all(&mut *conn).await
}

/// The `READY` datasets open to a lab: (name, registered folder).
#[dual]
pub async fn open_to_lab(conn: &mut impl AsConn, lab: &str) -> Result<Vec<(String, Option<String>)>, sqlx::Error> {
    let rows = sqlx::query!(
        dialect!(
            r#"SELECT name, source_path FROM datasets
               WHERE state = 'READY' AND (labs IS NULL OR EXISTS (SELECT 1 FROM json_each(datasets.labs) WHERE value = ?))
               ORDER BY name"#,
            r#"SELECT name, source_path FROM datasets
               WHERE state = 'READY'
                 AND (labs IS NULL OR EXISTS (SELECT 1 FROM json_array_elements_text(datasets.labs::json) e WHERE e = $1))
               ORDER BY name"#
        ),
        lab
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.source_path)).collect())
}

/// (lab, uid) of every enabled person with a uid: who may read the lab's
/// datasets on disk. `allocated`: the uids the local executor hands out
/// count too (on Slurm they do not: they exist on the server alone, and
/// on the nodes that number may be someone else's).
#[dual]
pub async fn lab_members(conn: &mut impl AsConn, allocated: bool) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT l.name AS "lab!", COALESCE(u.unix_uid, CASE WHEN ? THEN u.allocated_uid END) AS "uid!: i64"
           FROM users u JOIN labs l ON l.id = u.lab_id
           WHERE u.disabled_at IS NULL AND COALESCE(u.unix_uid, CASE WHEN ? THEN u.allocated_uid END) IS NOT NULL"#,
        allocated,
        allocated
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.lab, r.uid)).collect())
}
