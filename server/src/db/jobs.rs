//! Job rows: insert on submit, the start details an executor needs,
//! confirming or undoing a dispatch, recording an attempt's end, cancel.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use app::model::JobState;

use super::scheduling::{parse_gpus, record_charges};
use crate::executor::StartRequest;
use crate::policy::usage;
use crate::policy::{Accrued, Reservation};

pub struct NewJob<'a> {
    pub name: &'a str,
    pub user_id: i64,
    pub lab_id: i64,
    pub state: JobState,
    pub command: &'a str,
    pub num_gpus: u32,
    pub workspace: Option<&'a str>,
    pub env_json: &'a str,
    pub time_limit_minutes: u32,
    /// 0 = any tier.
    pub min_vram_gb: u32,
    /// Why it waits, if it enters the personal queue.
    pub pending_reason: Option<String>,
    /// Has dependencies or is an array element (read apart by the cycle).
    pub gated: bool,
    /// (array id, index) of an array element.
    pub array: Option<(i64, u32)>,
    /// The app of an interactive session (its kind is then `session`).
    pub session_app: Option<&'a str>,
}

#[dual]
pub async fn insert(conn: &mut WriteTx, j: NewJob<'_>, now_ms: i64) -> Result<i64, sqlx::Error> {
    let ids = insert_many(conn, &[j], now_ms).await?;
    Ok(ids[0])
}

/// Inserts jobs in one statement (a batch of submits costs one round trip
/// to SQLite, not one per job) and returns their ids in the order given.
#[dual]
pub async fn insert_many(conn: &mut WriteTx, jobs: &[NewJob<'_>], now_ms: i64) -> Result<Vec<i64>, sqlx::Error> {
    let rows: Vec<serde_json::Value> = jobs
        .iter()
        .map(|j| {
            serde_json::json!({
                "name": j.name, "user_id": j.user_id, "lab_id": j.lab_id, "state": j.state.as_str(),
                "command": j.command, "num_gpus": j.num_gpus, "workspace": j.workspace, "env_json": j.env_json,
                "time_limit_minutes": j.time_limit_minutes, "min_vram_gb": j.min_vram_gb,
                "entered": (j.state == JobState::GlobalQueueWait).then_some(now_ms),
                "reason": j.pending_reason, "gated": i32::from(j.gated),
                "array_id": j.array.map(|a| a.0), "array_index": j.array.map(|a| a.1),
                "kind": if j.session_app.is_some() { "session" } else { "batch" }, "session_app": j.session_app,
            })
        })
        .collect();
    let rows = serde_json::Value::Array(rows).to_string();
    // the ids' base, read first: a subquery on `jobs` inside the INSERT
    // made SQLite stage every batch in a temporary table
    let base: i64 = sqlx::query_scalar!(dialect!(
        r#"SELECT MAX(COALESCE((SELECT MAX(id) FROM jobs), 0), (SELECT value FROM job_id_floor WHERE id = 1))
           AS "base!: i64""#,
        r#"SELECT GREATEST(COALESCE((SELECT MAX(id) FROM jobs), 0), (SELECT value FROM job_id_floor WHERE id = 1))
           AS "base!: i64""#
    ))
    .fetch_one(conn.conn())
    .await?;
    let mut ids: Vec<i64> = sqlx::query_scalar!(
        dialect!(
            r#"INSERT INTO jobs (id, name, user_id, lab_id, state, command, num_gpus, workspace, env_json, time_limit_minutes,
                                min_vram_gb, submitted_at, queue_entered_at, pending_reason, gated, array_id, array_index,
                                kind, session_app)
               SELECT ? + 1 + key,
                      json_extract(value, '$.name'), json_extract(value, '$.user_id'), json_extract(value, '$.lab_id'),
                      json_extract(value, '$.state'), json_extract(value, '$.command'), json_extract(value, '$.num_gpus'),
                      json_extract(value, '$.workspace'), json_extract(value, '$.env_json'),
                      json_extract(value, '$.time_limit_minutes'), json_extract(value, '$.min_vram_gb'), ?,
                      json_extract(value, '$.entered'), json_extract(value, '$.reason'), json_extract(value, '$.gated'),
                      json_extract(value, '$.array_id'), json_extract(value, '$.array_index'),
                      json_extract(value, '$.kind'), json_extract(value, '$.session_app')
               FROM json_each(?) ORDER BY key
               RETURNING id AS "id!""#,
            r#"INSERT INTO jobs (id, name, user_id, lab_id, state, command, num_gpus, workspace, env_json, time_limit_minutes,
                                min_vram_gb, submitted_at, queue_entered_at, pending_reason, gated, array_id, array_index,
                                kind, session_app)
               SELECT $1 + t.ord,
                      t.v->>'name', (t.v->>'user_id')::BIGINT, (t.v->>'lab_id')::BIGINT,
                      t.v->>'state', t.v->>'command', (t.v->>'num_gpus')::BIGINT,
                      t.v->>'workspace', t.v->>'env_json',
                      (t.v->>'time_limit_minutes')::BIGINT, (t.v->>'min_vram_gb')::BIGINT, $2,
                      (t.v->>'entered')::BIGINT, t.v->>'reason', (t.v->>'gated')::BIGINT,
                      (t.v->>'array_id')::BIGINT, (t.v->>'array_index')::BIGINT,
                      t.v->>'kind', t.v->>'session_app'
               FROM json_array_elements($3::text::json) WITH ORDINALITY AS t(v, ord) ORDER BY t.ord
               RETURNING id AS "id!""#
        ),
        base,
        now_ms,
        rows
    )
    .fetch_all(conn.conn())
    .await?;
    // rows get ascending rowids in insertion order; RETURNING's own
    // order is unspecified
    ids.sort_unstable();
    Ok(ids)
}

/// Raises the floor new job ids start above (never lowers it): the
/// highest job id the output folder holds (#44).
#[dual]
pub async fn raise_id_floor(conn: &mut WriteTx, seen: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        dialect!(
            "UPDATE job_id_floor SET value = MAX(value, ?) WHERE id = 1",
            "UPDATE job_id_floor SET value = GREATEST(value, $1) WHERE id = 1"
        ),
        seen
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// How many jobs the database holds.
#[dual]
pub async fn count_all(conn: &mut impl AsConn) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "n!" FROM jobs"#).fetch_one(&mut *conn).await
}

/// A user's sessions that have not ended (policy §12's per-user limit).
#[dual]
pub async fn unfinished_sessions(conn: &mut impl AsConn, user_id: i64) -> Result<u32, sqlx::Error> {
    let n = sqlx::query_scalar!(
        r#"SELECT COUNT(*) AS "n!" FROM jobs WHERE user_id = ? AND kind = 'session' AND ended_at IS NULL"#,
        user_id
    )
    .fetch_one(&mut *conn)
    .await?;
    Ok(n as u32)
}

/// Counts for admission, per user: (unfinished jobs, jobs holding a
/// slot). Users with neither are absent.
#[dual]
pub async fn user_loads(
    conn: &mut impl AsConn,
    user_ids: &[i64],
) -> Result<std::collections::HashMap<i64, (u32, u32)>, sqlx::Error> {
    let users = serde_json::to_string(user_ids).unwrap_or_else(|_| "[]".into());
    let rows = sqlx::query!(
        r#"SELECT user_id, COUNT(*) AS "unfinished!: i64",
                  SUM(CASE WHEN state IN ('GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING') THEN 1 ELSE 0 END) AS "holding: i64"
           FROM jobs WHERE user_id IN (SELECT value FROM json_each(?))
             AND state IN ('USER_QUEUE_WAIT', 'GLOBAL_QUEUE_WAIT', 'DISPATCHING', 'RUNNING', 'CANCELLING')
           GROUP BY user_id"#,
        users
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.user_id, (r.unfinished as u32, r.holding.unwrap_or(0) as u32))).collect())
}

/// The executor request for a job's current attempt.
#[dual]
pub async fn start_request(
    conn: &mut impl AsConn,
    job_id: i64,
    layout: &crate::executor::layout::Layout,
    places: &crate::executor::places::Places,
) -> Result<Option<StartRequest>, sqlx::Error> {
    let Some(r) = sqlx::query!(
        r#"SELECT j.id AS "id!", j.attempt, j.command, j.env_json, j.time_limit_minutes, j.node, j.tier, j.gpu_indices,
                  j.num_gpus, COALESCE(u.unix_uid, u.allocated_uid) AS "run_uid?: i64", u.unix_uid, u.unix_gid, u.unix_groups, t.cpus_per_gpu AS "cpus_per_gpu?", t.mem_gb_per_gpu AS "mem_gb_per_gpu?",
                  t.slurm_partition AS "slurm_partition?", w.image_path AS "image_path?", j.array_id, j.array_index,
                  u.username, l.name AS lab_name, l.unix_gid AS lab_gid, j.submitted_at
           FROM jobs j JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = u.lab_id LEFT JOIN tiers t ON t.name = j.tier
                LEFT JOIN workspaces w ON w.lab_id = j.lab_id AND w.name = j.workspace
           WHERE j.id = ?"#,
        job_id
    )
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let gpus = parse_gpus(r.gpu_indices.as_deref());
    let output_dir = layout.output_dir(r.id);
    let tier = r.tier.unwrap_or_default();
    let own = serde_json::from_str(&r.env_json).unwrap_or_default();
    // the person's lab now, not the one the job was submitted under: a
    // member who moved on reaches the old share no more
    let mut job_places = places.of_job(&r.username, &r.lab_name, r.lab_gid.map(|g| g as u32));
    if let Some(p) = job_places.as_mut() {
        p.open = super::datasets::open_to_lab(&mut *conn, &r.lab_name)
            .await?
            .into_iter()
            .map(|(name, path)| {
                let folder = path.map(std::path::PathBuf::from).unwrap_or_else(|| places.dataset_store().join(&name));
                (name, folder)
            })
            .collect();
    }
    let env = crate::executor::env::attempt_env(
        own,
        &crate::executor::env::AttemptFacts {
            job: r.id,
            attempt: r.attempt,
            output_dir: &output_dir,
            gpus: &gpus,
            tier: &tier,
            array: r.array_id.zip(r.array_index),
            places: job_places.as_ref(),
        },
    );
    let n = r.num_gpus as u32;
    Ok(Some(StartRequest {
        job: r.id,
        attempt: r.attempt as u32,
        node: r.node.unwrap_or_default(),
        tier,
        partition: r.slurm_partition.unwrap_or_default(),
        gpus,
        command: r.command,
        env,
        time_limit: std::time::Duration::from_secs(r.time_limit_minutes.max(0) as u64 * 60),
        cpus: n * r.cpus_per_gpu.unwrap_or(1) as u32,
        mem_gb: n * r.mem_gb_per_gpu.unwrap_or(1) as u32,
        unix_uid: r.run_uid.map(|u| u as u32),
        uid_configured: r.unix_uid.is_some(),
        unix_gid: r.unix_gid.map(|g| g as u32),
        groups: r
            .unix_groups
            .unwrap_or_default()
            .split(',')
            .filter_map(|g| g.trim().parse().ok())
            .filter(|g| *g != 0)
            .collect(),
        output_dir,
        image: r.image_path.map(std::path::PathBuf::from),
        places: job_places,
        owner: format!("job {} attempt {} submitted {}", r.id, r.attempt, r.submitted_at),
    }))
}

/// The executor took the attempt: it runs from now.
#[dual]
pub async fn confirm_start(conn: &mut WriteTx, job_id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE job_attempts SET phase = 'RUNNING', started_at = ?
         WHERE job_id = ? AND phase = 'DISPATCHING' AND attempt = (SELECT attempt FROM jobs WHERE id = ?)",
        now_ms,
        job_id,
        job_id
    )
    .execute(conn.conn())
    .await?;
    sqlx::query!(
        "UPDATE jobs SET state = CASE state WHEN 'DISPATCHING' THEN 'RUNNING' ELSE state END, started_at = ?, last_error = NULL
         WHERE id = ?",
        now_ms,
        job_id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The executor refused the attempt: back to the queue with its place
/// (queue_entered_at untouched) and the error kept for the user. A job
/// cancelled meanwhile ends CANCELLED, charged for any reservation time.
#[dual]
pub async fn undo_dispatch(conn: &mut WriteTx, job_id: i64, error: &str, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM job_attempts WHERE job_id = ? AND phase = 'DISPATCHING' AND attempt = (SELECT attempt FROM jobs WHERE id = ?)",
        job_id,
        job_id
    )
    .execute(conn.conn())
    .await?;
    let Some(j) = sqlx::query!(
        "SELECT state, lab_id, tier, reservation_gpu_seconds, reservation_cost FROM jobs WHERE id = ?",
        job_id
    )
    .fetch_optional(conn.conn())
    .await?
    else {
        return Ok(());
    };
    if j.state == "CANCELLING" {
        let accrued = Accrued { gpu_seconds: j.reservation_gpu_seconds, cost: j.reservation_cost };
        let charges = usage::end_charges(j.lab_id, job_id, None, accrued, j.tier.as_deref().unwrap_or_default());
        record_charges(conn, &charges, now_ms).await?;
        sqlx::query!(
            "UPDATE jobs SET state = 'CANCELLED', ended_at = ?, end_reason = 'CANCELLED', node = NULL, tier = NULL,
                    gpu_indices = NULL, last_error = ?, reservation_gpu_seconds = 0, reservation_cost = 0
             WHERE id = ?",
            now_ms,
            error,
            job_id
        )
        .execute(conn.conn())
        .await?;
    } else {
        sqlx::query!(
            "UPDATE jobs SET state = 'GLOBAL_QUEUE_WAIT', node = NULL, tier = NULL, gpu_indices = NULL, last_error = ?
             WHERE id = ? AND state = 'DISPATCHING'",
            error,
            job_id
        )
        .execute(conn.conn())
        .await?;
    }
    Ok(())
}

/// An attempt the executor reported as ended, with what charging it and
/// the outcome table need.
pub struct EndedAttemptRow {
    pub id: i64,
    pub tier: String,
    pub gpu_indices: String,
    pub started_at: i64,
    pub phase: String,
    pub lab_id: i64,
    pub num_gpus: i64,
    pub state: String,
    /// An interactive session (no OOM escalation, policy §12).
    pub session: bool,
    pub reservation_gpu_seconds: f64,
    pub reservation_cost: f64,
    /// The tier the accrued reservation cost was held on.
    pub accrued_tier: Option<String>,
    pub tflops: Option<f64>,
    pub vram_gb: Option<i64>,
}

#[dual]
pub async fn ended_attempt(
    conn: &mut impl AsConn,
    job: i64,
    attempt: u32,
) -> Result<Option<EndedAttemptRow>, sqlx::Error> {
    let attempt = i64::from(attempt);
    let row = sqlx::query!(
        r#"SELECT a.id AS "id!", a.tier, a.gpu_indices, a.started_at, a.phase, j.lab_id, j.num_gpus, j.state, j.kind,
                  j.reservation_gpu_seconds, j.reservation_cost, j.accrued_tier, t.tflops AS "tflops?", t.vram_gb AS "vram_gb?"
           FROM job_attempts a JOIN jobs j ON j.id = a.job_id LEFT JOIN tiers t ON t.name = a.tier
           WHERE a.job_id = ? AND a.attempt = ?"#,
        job,
        attempt
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|a| EndedAttemptRow {
        id: a.id,
        tier: a.tier,
        gpu_indices: a.gpu_indices,
        started_at: a.started_at,
        phase: a.phase,
        lab_id: a.lab_id,
        num_gpus: a.num_gpus,
        state: a.state,
        session: a.kind == "session",
        reservation_gpu_seconds: a.reservation_gpu_seconds,
        reservation_cost: a.reservation_cost,
        accrued_tier: a.accrued_tier,
        tflops: a.tflops,
        vram_gb: a.vram_gb,
    }))
}

/// The attempt is over: when, how, why, and the TFLOP·s it used (of
/// which `reserved_tflop_s` were reservation time).
#[dual]
pub async fn close_attempt(
    conn: &mut WriteTx,
    attempt_id: i64,
    ended_ms: i64,
    exit_code: Option<i32>,
    reason: &str,
    usage_tflop_s: f64,
    reserved_tflop_s: f64,
) -> Result<(), sqlx::Error> {
    let exit_code = exit_code.map(i64::from);
    sqlx::query!(
        "UPDATE job_attempts SET phase = 'ENDED', ended_at = ?, exit_code = ?, reason = ?, usage_tflop_s = ?,
                reserved_tflop_s = ?
         WHERE id = ?",
        ended_ms,
        exit_code,
        reason,
        usage_tflop_s,
        reserved_tflop_s,
        attempt_id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Back to the global queue for attempt `next_attempt` on a tier with at
/// least `min_vram_gb`.
#[dual]
pub async fn requeue_for_larger_tier(
    conn: &mut WriteTx,
    job: i64,
    next_attempt: u32,
    min_vram_gb: u32,
    exit_code: Option<i32>,
) -> Result<(), sqlx::Error> {
    let (min_vram, next_attempt) = (i64::from(min_vram_gb), i64::from(next_attempt));
    let exit_code = exit_code.map(i64::from);
    sqlx::query!(
        "UPDATE jobs SET state = 'GLOBAL_QUEUE_WAIT', attempt = ?, min_vram_gb = ?, node = NULL, tier = NULL,
                        gpu_indices = NULL, exit_code = ?, end_reason = NULL, reservation_gpu_seconds = 0, reservation_cost = 0
                 WHERE id = ?",
        next_attempt,
        min_vram,
        exit_code,
        job
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// The job is over, in `state` for `reason`.
#[dual]
pub async fn finish(
    conn: &mut WriteTx,
    job: i64,
    state: JobState,
    ended_ms: i64,
    exit_code: Option<i32>,
    reason: &str,
) -> Result<(), sqlx::Error> {
    let state_text = state.as_str();
    let exit_code = exit_code.map(i64::from);
    sqlx::query!(
        "UPDATE jobs SET state = ?1, ended_at = ?2, exit_code = ?3,
                        end_reason = CASE WHEN ?4 = 'CANCELLED' THEN COALESCE(cancel_reason, ?4) ELSE ?4 END,
                        reservation_gpu_seconds = 0, reservation_cost = 0, rank = NULL, pending_reason = NULL
                 WHERE id = ?5",
        state_text,
        ended_ms,
        exit_code,
        reason,
        job
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

#[derive(Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Was queued: now CANCELLED (its reservation time charged).
    Cancelled,
    /// Was running: CANCELLING until the executor confirms the end.
    Cancelling,
    AlreadyEnded,
    NotFound,
}

#[dual]
pub async fn cancel(conn: &mut WriteTx, job_id: i64, now_ms: i64) -> Result<CancelOutcome, sqlx::Error> {
    cancel_for(conn, job_id, now_ms, "CANCELLED").await
}

/// The waiting jobs of a user (for ending them when the user is disabled).
#[dual]
pub async fn waiting_of_user(conn: &mut impl AsConn, user_id: i64) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT id AS "id!" FROM jobs WHERE user_id = ? AND state IN ('USER_QUEUE_WAIT', 'GLOBAL_QUEUE_WAIT') ORDER BY id"#,
        user_id
    )
    .fetch_all(&mut *conn)
    .await
}

/// [`cancel`], a waiting job ending with `end_reason` (a running one is
/// asked to stop as by its owner).
#[dual]
pub async fn cancel_for(
    conn: &mut WriteTx,
    job_id: i64,
    now_ms: i64,
    end_reason: &str,
) -> Result<CancelOutcome, sqlx::Error> {
    let Some(j) = sqlx::query!(
        "SELECT state, lab_id, reserved_node, reserved_tier, reserved_gpus, reservation_drained, reservation_accrued_at,
                reservation_gpu_seconds, reservation_cost FROM jobs WHERE id = ?",
        job_id
    )
    .fetch_optional(conn.conn())
    .await?
    else {
        return Ok(CancelOutcome::NotFound);
    };
    let state: JobState = j.state.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    match state {
        JobState::UserQueueWait | JobState::GlobalQueueWait => {
            let mut accrued = Accrued { gpu_seconds: j.reservation_gpu_seconds, cost: j.reservation_cost };
            let mut tier = String::new();
            if let (Some(node), Some(t)) = (j.reserved_node, j.reserved_tier) {
                let tflops = sqlx::query_scalar!("SELECT tflops FROM tiers WHERE name = ?", t)
                    .fetch_optional(conn.conn())
                    .await?
                    .unwrap_or(0.0);
                let mut res = Reservation {
                    node,
                    tier: t.clone(),
                    gpus: parse_gpus(j.reserved_gpus.as_deref()),
                    drained: j.reservation_drained as u32,
                    accrued_at_ms: j.reservation_accrued_at.unwrap_or(now_ms),
                };
                usage::accrue(&mut res, &mut accrued, tflops, now_ms);
                tier = t;
            }
            let charges = usage::end_charges(j.lab_id, job_id, None, accrued, &tier);
            record_charges(conn, &charges, now_ms).await?;
            sqlx::query!(
                "UPDATE jobs SET state = 'CANCELLED', ended_at = ?, end_reason = ?, rank = NULL, pending_reason = NULL,
                        reserved_node = NULL, reserved_tier = NULL, reserved_gpus = NULL, reservation_drained = 0,
                        reservation_accrued_at = NULL, reservation_gpu_seconds = 0, reservation_cost = 0
                 WHERE id = ?",
                now_ms,
                end_reason,
                job_id
            )
            .execute(conn.conn())
            .await?;
            Ok(CancelOutcome::Cancelled)
        }
        JobState::Dispatching | JobState::Running => {
            // the end it is asked for is the end it gets (IDLE, OWNER_DISABLED)
            let reason = (end_reason != "CANCELLED").then_some(end_reason);
            sqlx::query!(
                "UPDATE jobs SET state = 'CANCELLING', cancel_requested_at = ?, cancel_reason = ? WHERE id = ?",
                now_ms,
                reason,
                job_id
            )
            .execute(conn.conn())
            .await?;
            Ok(CancelOutcome::Cancelling)
        }
        JobState::Cancelling => Ok(CancelOutcome::Cancelling),
        JobState::Completed | JobState::Failed | JobState::Cancelled => Ok(CancelOutcome::AlreadyEnded),
    }
}

/// Attempts the executor should have: (job, attempt, still DISPATCHING?).
#[dual]
pub async fn live_attempts(conn: &mut impl AsConn) -> Result<Vec<(i64, u32, bool)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT a.job_id, a.attempt, a.phase FROM job_attempts a JOIN jobs j ON j.id = a.job_id
           WHERE a.phase IN ('DISPATCHING', 'RUNNING') AND a.attempt = j.attempt ORDER BY a.job_id"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.job_id, r.attempt as u32, r.phase == "DISPATCHING")).collect())
}

/// Running attempts of jobs CANCELLING since `requested_before_ms` or
/// earlier: (job, attempt, node).
#[dual]
pub async fn unconfirmed_cancels(
    conn: &mut impl AsConn,
    requested_before_ms: i64,
) -> Result<Vec<(i64, u32, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT a.job_id, a.attempt, a.node FROM job_attempts a JOIN jobs j ON j.id = a.job_id
           WHERE j.state = 'CANCELLING' AND j.cancel_requested_at <= ? AND a.phase = 'RUNNING' AND a.attempt = j.attempt"#,
        requested_before_ms
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.job_id, r.attempt as u32, r.node)).collect())
}

#[dual]
pub async fn set_kill_unconfirmed(conn: &mut WriteTx, job_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query!("UPDATE jobs SET kill_unconfirmed = 1 WHERE id = ?", job_id).execute(conn.conn()).await?;
    Ok(())
}

/// Attempts whose job is CANCELLING: (job, attempt) to signal.
#[dual]
pub async fn cancelling_attempts(conn: &mut impl AsConn) -> Result<Vec<(i64, u32)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT a.job_id, a.attempt FROM job_attempts a JOIN jobs j ON j.id = a.job_id
           WHERE j.state = 'CANCELLING' AND a.phase = 'RUNNING' AND a.attempt = j.attempt"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.job_id, r.attempt as u32)).collect())
}
