-- Notifications (api.md "Notifications and reports"): per-user settings
-- and a transactional outbox.
--
-- The outbox rows are written by triggers on `jobs`, so an event is
-- committed in the very transaction that changes the job, whichever code
-- path changes it (a start confirmed, an end recorded, a cancel, a
-- dependency that can never be met, an OOM retry): nothing is lost on a
-- crash, and no path can forget to notify. A separate task delivers the
-- rows, never the scheduler's cycle.
CREATE TABLE notification_settings (
    user_id        INTEGER PRIMARY KEY REFERENCES users(id),
    email          TEXT,
    webhook_url    TEXT,
    -- signs webhook bodies (HMAC-SHA256); shown to the user once
    webhook_secret TEXT,
    -- JSON array of "started", "ended", "retried"
    events         TEXT    NOT NULL DEFAULT '["started","ended","retried"]',
    updated_at     INTEGER NOT NULL
);

CREATE TABLE notification_outbox (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users(id),
    job_id          INTEGER NOT NULL REFERENCES jobs(id),
    event           TEXT    NOT NULL CHECK (event IN ('started', 'ended', 'retried')),
    channel         TEXT    NOT NULL CHECK (channel IN ('email', 'webhook')),
    -- the address or URL the event is for, as set when it happened
    target          TEXT    NOT NULL,
    -- the job's state, attempt, exit code and end reason at the event
    snapshot        TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'PENDING'
                            CHECK (state IN ('PENDING', 'SENDING', 'DELIVERED', 'FAILED')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT,
    delivered_at    INTEGER
);
CREATE INDEX notification_outbox_due ON notification_outbox(state, next_attempt_at);
CREATE INDEX notification_outbox_user ON notification_outbox(user_id, id);

-- One row per channel the job's owner has, if they asked for the event.
CREATE TRIGGER jobs_notify_state AFTER UPDATE OF state ON jobs
WHEN NEW.state <> OLD.state AND NEW.state IN ('RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED')
     AND EXISTS (SELECT 1 FROM notification_settings s WHERE s.user_id = NEW.user_id)
BEGIN
    INSERT INTO notification_outbox (user_id, job_id, event, channel, target, snapshot, created_at, next_attempt_at)
    SELECT NEW.user_id, NEW.id, ev.event, ch.channel, ch.target,
           json_object('state', NEW.state, 'attempt', NEW.attempt, 'exit_code', NEW.exit_code,
                       'end_reason', NEW.end_reason),
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    FROM (SELECT CASE WHEN NEW.state = 'RUNNING' THEN 'started' ELSE 'ended' END AS event) ev
    JOIN (SELECT 'email' AS channel, email AS target, events FROM notification_settings
           WHERE user_id = NEW.user_id AND email IS NOT NULL
          UNION ALL
          SELECT 'webhook', webhook_url, events FROM notification_settings
           WHERE user_id = NEW.user_id AND webhook_url IS NOT NULL) ch
    WHERE EXISTS (SELECT 1 FROM json_each(ch.events) WHERE value = ev.event);
END;

-- A GPU OOM sent the job back for a larger tier (policy §6).
CREATE TRIGGER jobs_notify_retry AFTER UPDATE OF attempt ON jobs
WHEN NEW.attempt > OLD.attempt
     AND EXISTS (SELECT 1 FROM notification_settings s WHERE s.user_id = NEW.user_id)
BEGIN
    INSERT INTO notification_outbox (user_id, job_id, event, channel, target, snapshot, created_at, next_attempt_at)
    SELECT NEW.user_id, NEW.id, 'retried', ch.channel, ch.target,
           json_object('state', NEW.state, 'attempt', NEW.attempt, 'exit_code', NEW.exit_code,
                       'end_reason', OLD.end_reason),
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    FROM (SELECT 'email' AS channel, email AS target, events FROM notification_settings
           WHERE user_id = NEW.user_id AND email IS NOT NULL
          UNION ALL
          SELECT 'webhook', webhook_url, events FROM notification_settings
           WHERE user_id = NEW.user_id AND webhook_url IS NOT NULL) ch
    WHERE EXISTS (SELECT 1 FROM json_each(ch.events) WHERE value = 'retried');
END;
