//! Notification settings and the outbox (the rows themselves are written
//! by triggers on `jobs`, see the migration): claiming due deliveries,
//! recording their outcome, listing them for their user.

use db_macros::dual;

use super::AsConn;
use super::WriteTx;

pub struct SettingsRow {
    pub email: Option<String>,
    pub webhook_url: Option<String>,
    pub webhook_secret: Option<String>,
    pub events: Vec<String>,
}

#[dual]
pub async fn settings(conn: &mut impl AsConn, user_id: i64) -> Result<Option<SettingsRow>, sqlx::Error> {
    Ok(sqlx::query!(
        "SELECT email, webhook_url, webhook_secret, events FROM notification_settings WHERE user_id = ?",
        user_id
    )
    .fetch_optional(&mut *conn)
    .await?
    .map(|r| SettingsRow {
        email: r.email,
        webhook_url: r.webhook_url,
        webhook_secret: r.webhook_secret,
        events: serde_json::from_str(&r.events).unwrap_or_default(),
    }))
}

#[dual]
pub async fn put_settings(conn: &mut WriteTx, user_id: i64, row: &SettingsRow, now_ms: i64) -> Result<(), sqlx::Error> {
    let events = serde_json::to_string(&row.events).unwrap_or_else(|_| "[]".into());
    sqlx::query!(
        "INSERT INTO notification_settings (user_id, email, webhook_url, webhook_secret, events, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, webhook_url = excluded.webhook_url,
             webhook_secret = excluded.webhook_secret, events = excluded.events, updated_at = excluded.updated_at",
        user_id,
        row.email,
        row.webhook_url,
        row.webhook_secret,
        events,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// One delivery to make.
#[derive(Debug, Clone)]
pub struct Due {
    pub id: i64,
    pub user_id: i64,
    pub job_id: Option<i64>,
    pub request_id: Option<i64>,
    pub event: String,
    pub channel: String,
    pub target: String,
    pub snapshot: String,
    pub attempts: u32,
}

/// Deliveries a crash left half-done go back to the queue: they are sent
/// again, with the same delivery id, so a receiver can tell.
#[dual]
pub async fn requeue_sending(conn: &mut WriteTx) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query!("UPDATE notification_outbox SET state = 'PENDING' WHERE state = 'SENDING'")
        .execute(conn.conn())
        .await?
        .rows_affected())
}

/// Claims up to `limit` due deliveries, oldest first, at most
/// `per_target` of each target and none of a target in `busy` (channel,
/// target pairs still being sent to): they become SENDING in the caller's
/// transaction. One researcher's slow target so takes no more than its
/// own share of the senders.
#[dual]
pub async fn claim_due(
    conn: &mut WriteTx,
    now_ms: i64,
    limit: i64,
    per_target: i64,
    busy: &[(String, String)],
) -> Result<Vec<Due>, sqlx::Error> {
    let busy: Vec<[&str; 2]> = busy.iter().map(|(c, t)| [c.as_str(), t.as_str()]).collect();
    let busy = serde_json::to_string(&busy).unwrap_or_else(|_| "[]".into());
    let rows = sqlx::query!(
        dialect!(
            r#"UPDATE notification_outbox SET state = 'SENDING'
           WHERE id IN (
               SELECT id FROM (
                   SELECT id, next_attempt_at,
                          ROW_NUMBER() OVER (PARTITION BY channel, target ORDER BY next_attempt_at, id) AS n
                   FROM notification_outbox
                   WHERE state = 'PENDING' AND next_attempt_at <= ?
                     AND NOT EXISTS (SELECT 1 FROM json_each(?) b
                                     WHERE b.value ->> 0 = channel AND b.value ->> 1 = target)) AS due
               WHERE n <= ? ORDER BY next_attempt_at, id LIMIT ?)
           RETURNING id AS "id!", user_id, job_id, request_id, event, channel, target, snapshot, attempts"#,
            r#"UPDATE notification_outbox SET state = 'SENDING'
           WHERE id IN (
               SELECT id FROM (
                   SELECT id, next_attempt_at,
                          ROW_NUMBER() OVER (PARTITION BY channel, target ORDER BY next_attempt_at, id) AS n
                   FROM notification_outbox
                   WHERE state = 'PENDING' AND next_attempt_at <= $1
                     AND NOT EXISTS (SELECT 1 FROM json_array_elements($2::text::json) AS b(value)
                                     WHERE b.value ->> 0 = channel AND b.value ->> 1 = target)) AS due
               WHERE n <= $3 ORDER BY next_attempt_at, id LIMIT $4)
           RETURNING id AS "id!", user_id, job_id, request_id, event, channel, target, snapshot, attempts"#
        ),
        now_ms,
        busy,
        per_target,
        limit
    )
    .fetch_all(conn.conn())
    .await?;
    let mut due: Vec<Due> = rows
        .into_iter()
        .map(|r| Due {
            id: r.id,
            user_id: r.user_id,
            job_id: r.job_id,
            request_id: r.request_id,
            event: r.event,
            channel: r.channel,
            target: r.target,
            snapshot: r.snapshot,
            attempts: r.attempts.max(0) as u32,
        })
        .collect();
    due.sort_by_key(|d| d.id);
    Ok(due)
}

/// When the next pending delivery falls due (None: none pending).
#[dual]
pub async fn next_due(conn: &mut impl AsConn) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT MIN(next_attempt_at) AS "at?: i64" FROM notification_outbox WHERE state = 'PENDING'"#)
        .fetch_one(&mut *conn)
        .await
}

#[dual]
pub async fn delivered(conn: &mut WriteTx, id: i64, now_ms: i64) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE notification_outbox SET state = 'DELIVERED', attempts = attempts + 1, delivered_at = ?, last_error = NULL
         WHERE id = ? AND state = 'SENDING'",
        now_ms,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// A failed try: again at `retry_at`, or given up (None).
#[dual]
pub async fn failed(conn: &mut WriteTx, id: i64, error: &str, retry_at: Option<i64>) -> Result<(), sqlx::Error> {
    let state = if retry_at.is_some() { "PENDING" } else { "FAILED" };
    let at = retry_at.unwrap_or(0);
    sqlx::query!(
        "UPDATE notification_outbox SET state = ?, attempts = attempts + 1, last_error = ?,
                next_attempt_at = CASE WHEN ? = 'PENDING' THEN ? ELSE next_attempt_at END
         WHERE id = ? AND state = 'SENDING'",
        state,
        error,
        state,
        at,
        id
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}

/// A user's most recent deliveries, newest first.
#[dual]
pub async fn deliveries(
    conn: &mut impl AsConn,
    user_id: i64,
    limit: i64,
) -> Result<Vec<app::model::views::DeliveryView>, sqlx::Error> {
    use crate::clock::rfc3339;
    Ok(sqlx::query!(
        r#"SELECT id AS "id!", job_id, request_id, event, channel, target, state, attempts, created_at, next_attempt_at,
                  delivered_at, last_error
           FROM notification_outbox WHERE user_id = ? ORDER BY id DESC LIMIT ?"#,
        user_id,
        limit
    )
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(|r| app::model::views::DeliveryView {
        id: r.id,
        job: r.job_id,
        data_request: r.request_id,
        event: r.event,
        channel: r.channel,
        target: r.target,
        state: r.state.clone(),
        attempts: r.attempts.max(0) as u32,
        created_at: rfc3339(r.created_at),
        next_attempt_at: (r.state == "PENDING").then(|| rfc3339(r.next_attempt_at)),
        delivered_at: r.delivered_at.map(rfc3339),
        last_error: r.last_error,
    })
    .collect())
}

/// A data request's news for its requester (decided, ready, failed): one
/// row per channel they have, with the request as it stands now.
#[dual]
pub async fn data_request_event(
    conn: &mut WriteTx,
    user_id: i64,
    request_id: i64,
    now_ms: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        dialect!(
        r#"INSERT INTO notification_outbox (user_id, request_id, event, channel, target, snapshot, created_at, next_attempt_at)
           SELECT ?1, ?2, 'data_request', ch.channel, ch.target,
                  (SELECT json_object('id', r.id, 'name', r.name, 'url', r.url, 'state', r.state,
                                      'decision_reason', r.decision_reason, 'message', r.message)
                   FROM data_requests r WHERE r.id = ?2),
                  ?3, ?3
           FROM (SELECT 'email' AS channel, email AS target FROM notification_settings
                  WHERE user_id = ?1 AND email IS NOT NULL
                 UNION ALL
                 SELECT 'webhook', webhook_url FROM notification_settings
                  WHERE user_id = ?1 AND webhook_url IS NOT NULL) ch"#,
        r#"INSERT INTO notification_outbox (user_id, request_id, event, channel, target, snapshot, created_at, next_attempt_at)
           SELECT $1, $2, 'data_request', ch.channel, ch.target,
                  (SELECT json_build_object('id', r.id, 'name', r.name, 'url', r.url, 'state', r.state,
                                      'decision_reason', r.decision_reason, 'message', r.message)::TEXT
                   FROM data_requests r WHERE r.id = $2),
                  $3, $3
           FROM (SELECT 'email' AS channel, email AS target FROM notification_settings
                  WHERE user_id = $1 AND email IS NOT NULL
                 UNION ALL
                 SELECT 'webhook', webhook_url FROM notification_settings
                  WHERE user_id = $1 AND webhook_url IS NOT NULL) ch"#
        ),
        user_id,
        request_id,
        now_ms
    )
    .execute(conn.conn())
    .await?;
    Ok(())
}
