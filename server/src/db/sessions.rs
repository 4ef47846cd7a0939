//! Session rows (jobs of kind `session`): who may reach one and where it
//! stands, readiness and the last activity the idle end is counted from.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;
use app::model::JobState;

/// What the proxy needs to decide on a request.
pub struct Reach {
    pub user_id: i64,
    pub state: JobState,
    pub ready: bool,
    /// The uid the job runs as (its app's socket must be this uid's).
    pub uid: Option<u32>,
    /// The node it runs on, as the site reaches it (`nodes.addr`, else
    /// its name).
    pub node_addr: Option<String>,
}

#[dual]
pub async fn reach(conn: &mut impl AsConn, id: i64) -> Result<Option<Reach>, sqlx::Error> {
    let Some(r) = sqlx::query!(
        r#"SELECT j.user_id, j.state, j.session_ready_at, COALESCE(u.unix_uid, u.allocated_uid) AS "uid?: i64",
                  COALESCE(n.addr, j.node) AS "node_addr?: String"
           FROM jobs j JOIN users u ON u.id = j.user_id LEFT JOIN nodes n ON n.name = j.node
           WHERE j.id = ? AND j.kind = 'session'"#,
        id
    )
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let state = r.state.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(Some(Reach {
        user_id: r.user_id,
        state,
        ready: r.session_ready_at.is_some(),
        uid: r.uid.map(|u| u as u32),
        node_addr: r.node_addr,
    }))
}

/// A running session, as the watcher checks it.
pub struct Running {
    pub id: i64,
    pub uid: Option<u32>,
    pub ready_at: Option<i64>,
    pub active_at: Option<i64>,
    pub node_addr: Option<String>,
}

/// Sessions whose job runs (not those already asked to stop).
#[dual]
pub async fn running(conn: &mut impl AsConn) -> Result<Vec<Running>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT j.id AS "id!", j.session_ready_at, j.session_active_at,
                  COALESCE(u.unix_uid, u.allocated_uid) AS "uid?: i64", COALESCE(n.addr, j.node) AS "node_addr?: String"
           FROM jobs j JOIN users u ON u.id = j.user_id LEFT JOIN nodes n ON n.name = j.node
           WHERE j.kind = 'session' AND j.state = 'RUNNING'"#
    )
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Running {
            id: r.id,
            uid: r.uid.map(|u| u as u32),
            ready_at: r.session_ready_at,
            active_at: r.session_active_at,
            node_addr: r.node_addr,
        })
        .collect())
}

/// The app answered: READY, and idle counted from now.
#[dual]
pub async fn mark_ready(conn: &mut WriteTx, id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE jobs SET session_ready_at = ?1, session_active_at = ?1 WHERE id = ?2 AND session_ready_at IS NULL",
        now_ms,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// Someone used it at `at_ms` (never moves back).
#[dual]
pub async fn record_activity(conn: &mut WriteTx, id: i64, at_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        dialect!(
            "UPDATE jobs SET session_active_at = MAX(COALESCE(session_active_at, 0), ?1) WHERE id = ?2 AND kind = 'session'",
            "UPDATE jobs SET session_active_at = GREATEST(COALESCE(session_active_at, 0), $1) WHERE id = $2 AND kind = 'session'"
        ),
        at_ms,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}
