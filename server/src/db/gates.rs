//! What holds a personal-queue job besides a free slot: its dependencies
//! and its array's `%N` (api.md "Jobs"). Read into the cycle's snapshot;
//! the policy decides (`policy::personal`), and its verdicts are written
//! back here: the reason each job stays, and the jobs whose dependencies
//! can never be met.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use std::collections::HashMap;

use crate::policy::{After, AfterKind, ArrayId, ArrayLimit, JobId, Outcome, PersonalJob};

pub fn kind_of(text: &str) -> Option<AfterKind> {
    match text {
        "afterok" => Some(AfterKind::Ok),
        "afterany" => Some(AfterKind::Any),
        "afternotok" => Some(AfterKind::NotOk),
        _ => None,
    }
}

pub fn kind_text(kind: AfterKind) -> &'static str {
    match kind {
        AfterKind::Ok => "afterok",
        AfterKind::Any => "afterany",
        AfterKind::NotOk => "afternotok",
    }
}

pub fn outcome_of(state: &str) -> Outcome {
    match state {
        "COMPLETED" => Outcome::Completed,
        "FAILED" | "CANCELLED" => Outcome::NotOk,
        _ => Outcome::Unfinished,
    }
}

/// Fills in the dependencies of the gated jobs among `personal`.
#[dual]
pub async fn read_dependencies(
    conn: &mut impl AsConn,
    personal: &mut [PersonalJob],
    gated: &[JobId],
) -> Result<(), sqlx::Error> {
    if gated.is_empty() {
        return Ok(());
    }
    let ids = serde_json::to_string(gated).unwrap_or_else(|_| "[]".into());
    let rows = sqlx::query!(
        r#"SELECT d.job_id, d.kind, d.on_job, o.state
           FROM job_dependencies d JOIN jobs o ON o.id = d.on_job
           WHERE d.job_id IN (SELECT value FROM json_each(?))"#,
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut after: HashMap<JobId, Vec<After>> = HashMap::new();
    for r in rows {
        let Some(kind) = kind_of(&r.kind) else { continue };
        after.entry(r.job_id).or_default().push(After { kind, on: r.on_job, outcome: outcome_of(&r.state) });
    }
    for p in personal.iter_mut() {
        if let Some(a) = after.remove(&p.job.id) {
            p.after = a;
        }
    }
    Ok(())
}

/// The `%N` of these arrays (those with one), with how many of each
/// array's elements hold a slot.
#[dual]
pub async fn array_limits(conn: &mut impl AsConn, arrays: &[ArrayId]) -> Result<Vec<ArrayLimit>, sqlx::Error> {
    if arrays.is_empty() {
        return Ok(Vec::new());
    }
    let ids = serde_json::to_string(arrays).unwrap_or_else(|_| "[]".into());
    let rows = sqlx::query!(
        r#"SELECT a.id AS "id!", a.max_running AS "max_running!",
                  (SELECT COUNT(*) FROM jobs e WHERE e.array_id = a.id
                     AND e.state IN ('GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING')) AS "holding!: i64"
           FROM job_arrays a
           WHERE a.id IN (SELECT value FROM json_each(?)) AND a.max_running IS NOT NULL"#,
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| ArrayLimit { array: r.id, max_running: r.max_running.max(1) as u32, holding: r.holding as u32 })
        .collect())
}

/// The array of every array element holding a slot (the forecast counts
/// them against their array's `%N`).
#[dual]
pub async fn elements_holding(conn: &mut impl AsConn) -> Result<HashMap<JobId, ArrayId>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id AS "id!", array_id AS "array_id!" FROM jobs
           WHERE array_id IS NOT NULL AND state IN ('GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING')"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.array_id)).collect())
}

/// The reason each of these personal jobs stays (the caller passes only
/// those whose stored reason changed: one `UPDATE … FROM json_each` for
/// all of them scanned every waiting job per row: under the submit bench,
/// 25,000 waiting × 128 held, the decide phase took 430 ms a cycle instead
/// of 17, and submits fell from 4,957 to 2,482 jobs/s).
#[dual]
pub async fn mark_held(conn: &mut WriteTx, held: &[(JobId, String)]) -> Result<(), sqlx::Error> {
    for (id, reason) in held {
        sqlx::query!("UPDATE jobs SET pending_reason = ? WHERE id = ? AND state = 'USER_QUEUE_WAIT'", reason, id)
            .execute(conn.conn())
            .await?;
    }
    Ok(())
}

/// Ends jobs whose dependencies can never be met (a job cancelled since
/// the snapshot is left alone).
#[dual]
pub async fn end_never_satisfied(conn: &mut WriteTx, jobs: &[JobId], now_ms: i64) -> Result<(), sqlx::Error> {
    for id in jobs {
        sqlx::query!(
            "UPDATE jobs SET state = 'CANCELLED', ended_at = ?, end_reason = 'DEPENDENCY_NEVER_SATISFIED',
                    pending_reason = NULL, rank = NULL
             WHERE id = ? AND state = 'USER_QUEUE_WAIT'",
            now_ms,
            id
        )
        .execute(conn.conn())
        .await?;
    }
    Ok(())
}

/// A job's lab and state, for checking a dependency on it.
#[dual]
pub async fn lab_and_state(conn: &mut impl AsConn, id: JobId) -> Result<Option<(i64, String)>, sqlx::Error> {
    Ok(sqlx::query!("SELECT lab_id, state FROM jobs WHERE id = ?", id)
        .fetch_optional(&mut *conn)
        .await?
        .map(|r| (r.lab_id, r.state)))
}

/// A new array's row; its elements are inserted with its id.
#[dual]
pub async fn insert_array(
    conn: &mut WriteTx,
    user_id: i64,
    lab_id: i64,
    spec: &str,
    max_running: Option<u32>,
    now_ms: i64,
) -> Result<ArrayId, sqlx::Error> {
    let max_running = max_running.map(i64::from);
    sqlx::query_scalar!(
        r#"INSERT INTO job_arrays (user_id, lab_id, spec, max_running, submitted_at) VALUES (?, ?, ?, ?, ?)
           RETURNING id AS "id!""#,
        user_id,
        lab_id,
        spec,
        max_running,
        now_ms
    )
    .fetch_one(conn.conn())
    .await
}

/// The dependencies of new jobs: each of `jobs` gets all of `after`.
#[dual]
pub async fn insert_dependencies(
    conn: &mut WriteTx,
    jobs: &[JobId],
    after: &[(AfterKind, JobId)],
) -> Result<(), sqlx::Error> {
    if jobs.is_empty() || after.is_empty() {
        return Ok(());
    }
    let rows: Vec<serde_json::Value> = jobs
        .iter()
        .flat_map(|job| after.iter().map(move |(kind, on)| serde_json::json!([job, kind_text(*kind), on])))
        .collect();
    let rows = serde_json::Value::Array(rows).to_string();
    sqlx::query!(
        dialect!(
            "INSERT INTO job_dependencies (job_id, kind, on_job)
             SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)",
            "INSERT INTO job_dependencies (job_id, kind, on_job)
             SELECT (value->>0)::BIGINT, value->>1, (value->>2)::BIGINT FROM json_array_elements($1::text::json) AS value"
        ),
        rows
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The dependencies of a job, with the depended-on jobs' states (the job
/// object's `dependencies`).
#[dual]
pub async fn dependencies_of(
    conn: &mut impl AsConn,
    id: JobId,
) -> Result<Vec<app::model::DependencyView>, sqlx::Error> {
    Ok(sqlx::query!(
        "SELECT d.kind, d.on_job, o.state FROM job_dependencies d JOIN jobs o ON o.id = d.on_job
         WHERE d.job_id = ? ORDER BY d.on_job",
        id
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .filter_map(|r| Some(app::model::DependencyView { kind: r.kind, job: r.on_job, state: r.state.parse().ok()? }))
    .collect())
}

/// An array's owner and lab.
#[dual]
pub async fn array_owner(conn: &mut impl AsConn, id: ArrayId) -> Result<Option<(String, i64)>, sqlx::Error> {
    Ok(sqlx::query!(
        "SELECT u.username, a.lab_id FROM job_arrays a JOIN users u ON u.id = a.user_id WHERE a.id = ?",
        id
    )
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| (r.username, r.lab_id)))
}

/// An array's elements by index.
#[dual]
pub async fn elements(conn: &mut impl AsConn, id: ArrayId) -> Result<Vec<(JobId, String)>, sqlx::Error> {
    Ok(sqlx::query!(r#"SELECT id AS "id!", state FROM jobs WHERE array_id = ? ORDER BY array_index"#, id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|r| (r.id, r.state))
        .collect())
}

/// Each array's spec and its elements counted by state.
#[dual]
pub async fn summaries(
    conn: &mut impl AsConn,
    arrays: &[ArrayId],
) -> Result<Vec<app::model::views::ArraySummary>, sqlx::Error> {
    if arrays.is_empty() {
        return Ok(Vec::new());
    }
    let ids = serde_json::to_string(arrays).unwrap_or_else(|_| "[]".into());
    let rows = sqlx::query!(
        r#"SELECT a.id AS "id!", a.spec, a.max_running, j.state, COUNT(*) AS "n!: i64"
           FROM job_arrays a JOIN jobs j ON j.array_id = a.id
           WHERE a.id IN (SELECT value FROM json_each(?))
           GROUP BY a.id, j.state ORDER BY a.id DESC"#,
        ids
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut out: Vec<app::model::views::ArraySummary> = Vec::new();
    for r in rows {
        if out.last().is_none_or(|s| s.id != r.id) {
            out.push(app::model::views::ArraySummary {
                id: r.id,
                spec: r.spec.clone(),
                max_running: r.max_running.map(|n| n as u32),
                total: 0,
                counts: Default::default(),
            });
        }
        let summary = out.last_mut().expect("pushed above");
        summary.total += r.n as u32;
        summary.counts.insert(r.state, r.n as u32);
    }
    Ok(out)
}
