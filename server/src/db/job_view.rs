//! A job as the API and the console show it (api.md's job object): read
//! from its rows, or built from what a submit just inserted.

use db_macros::dual;

use super::AsConn;
use app::model::JobState;

use super::jobs::NewJob;
use super::scheduling::parse_gpus;

/// The view of a job [`insert`](super::jobs::insert) just wrote (what `view` would read back,
/// without reading it: submit answers with it).
pub fn inserted_view(
    id: i64,
    j: &NewJob<'_>,
    user: &str,
    lab: &str,
    dependencies: &[app::model::DependencyView],
    now_ms: i64,
) -> app::model::JobView {
    use crate::clock::rfc3339;
    app::model::JobView {
        id,
        name: j.name.to_string(),
        user: user.to_string(),
        lab: lab.to_string(),
        state: j.state,
        num_gpus: j.num_gpus,
        attempt: 1,
        rank: None,
        pending_reason: j.pending_reason.clone(),
        tier: None,
        node: None,
        gpu_indices: Vec::new(),
        submitted_at: rfc3339(now_ms),
        queue_entered_at: (j.state == JobState::GlobalQueueWait).then(|| rfc3339(now_ms)),
        started_at: None,
        ended_at: None,
        exit_code: None,
        end_reason: None,
        usage_tflop_s: 0.0,
        reservation: None,
        attempts: Vec::new(),
        time_limit_minutes: j.time_limit_minutes,
        last_error: None,
        kill_unconfirmed: false,
        estimated_start: None,
        dependencies: dependencies.to_vec(),
        array: j.array.map(|(id, index)| app::model::ArrayRef { id, index }),
        kind: if j.session_app.is_some() { app::model::JobKind::Session } else { app::model::JobKind::Batch },
        session: j.session_app.map(|name| session_view(id, name, j.state, None, None)),
    }
}

/// A session's place: from its job's state and whether its app answered.
fn session_view(
    id: i64,
    app: &str,
    state: JobState,
    ready_at: Option<i64>,
    active_at: Option<i64>,
) -> app::model::SessionView {
    use app::model::SessionState;
    let state = match state {
        JobState::UserQueueWait | JobState::GlobalQueueWait | JobState::Dispatching => SessionState::Waiting,
        JobState::Running | JobState::Cancelling if ready_at.is_some() => SessionState::Ready,
        JobState::Running | JobState::Cancelling => SessionState::Starting,
        JobState::Completed | JobState::Failed | JobState::Cancelled => SessionState::Ended,
    };
    let idle_since = active_at.filter(|_| state == SessionState::Ready).map(crate::clock::rfc3339);
    app::model::SessionView { app: app.to_string(), state, url: format!("/s/{id}/"), idle_since, idle_ends_at: None }
}

/// The api.md job object.
#[dual]
pub async fn view(conn: &mut impl AsConn, id: i64) -> Result<Option<app::model::JobView>, sqlx::Error> {
    use crate::clock::rfc3339;
    let Some(j) = sqlx::query!(
        r#"SELECT j.id AS "id!", j.name, u.username, l.name AS lab, j.state, j.num_gpus, j.attempt, j.rank, j.pending_reason,
                  j.tier, j.node, j.gpu_indices, j.submitted_at, j.queue_entered_at, j.started_at, j.ended_at, j.exit_code,
                  j.end_reason, j.usage_tflop_s, j.reserved_node, j.reserved_tier, j.reserved_gpus,
                  j.reservation_gpu_seconds, j.time_limit_minutes, j.last_error, j.kill_unconfirmed, j.array_id,
                  j.array_index, j.kind, j.session_app, j.session_ready_at, j.session_active_at
           FROM jobs j JOIN users u ON u.id = j.user_id JOIN labs l ON l.id = j.lab_id WHERE j.id = ?"#,
        id
    )
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let attempts = sqlx::query!(
        "SELECT attempt, tier, node, phase, started_at, ended_at, exit_code, reason, usage_tflop_s, reserved_tflop_s
         FROM job_attempts WHERE job_id = ? ORDER BY attempt",
        id
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|a| app::model::AttemptView {
        attempt: a.attempt as u32,
        tier: a.tier,
        node: a.node,
        started_at: (a.phase != "DISPATCHING").then(|| rfc3339(a.started_at)),
        ended_at: a.ended_at.map(rfc3339),
        exit_code: a.exit_code,
        reason: a.reason,
        usage_tflop_s: a.usage_tflop_s,
        reserved_usage_tflop_s: a.reserved_tflop_s,
    })
    .collect();
    let reservation = super::scheduling::reservation_view(
        j.reserved_node,
        j.reserved_tier,
        j.reserved_gpus.as_deref(),
        j.reservation_gpu_seconds,
    );
    let state: JobState = j.state.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let dependencies = super::gates::dependencies_of(conn, id).await?;
    let array = j.array_id.zip(j.array_index).map(|(id, index)| app::model::ArrayRef { id, index: index as u32 });
    Ok(Some(app::model::JobView {
        id: j.id,
        name: j.name,
        user: j.username,
        lab: j.lab,
        state,
        num_gpus: j.num_gpus as u32,
        attempt: j.attempt as u32,
        rank: j.rank.map(|r| r as u32),
        pending_reason: j.pending_reason,
        tier: j.tier,
        node: j.node,
        gpu_indices: parse_gpus(j.gpu_indices.as_deref()),
        submitted_at: rfc3339(j.submitted_at),
        queue_entered_at: j.queue_entered_at.map(rfc3339),
        started_at: j.started_at.map(rfc3339),
        ended_at: j.ended_at.map(rfc3339),
        exit_code: j.exit_code,
        end_reason: j.end_reason,
        usage_tflop_s: j.usage_tflop_s,
        reservation,
        attempts,
        time_limit_minutes: j.time_limit_minutes as u32,
        last_error: j.last_error,
        kill_unconfirmed: j.kill_unconfirmed != 0,
        estimated_start: None,
        dependencies,
        array,
        kind: if j.kind == "session" { app::model::JobKind::Session } else { app::model::JobKind::Batch },
        session: j.session_app.map(|name| session_view(j.id, &name, state, j.session_ready_at, j.session_active_at)),
    }))
}
