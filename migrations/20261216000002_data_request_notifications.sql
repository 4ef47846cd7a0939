-- Data requests notify their requester too (api.md "Research data",
-- event `data_request`): the outbox row names a job or a request. SQLite
-- cannot change a CHECK in place, so the table is made again (the
-- triggers that write it with it).
DROP TRIGGER jobs_notify_state;
DROP TRIGGER jobs_notify_retry;

CREATE TABLE notification_outbox_new (
    id              INTEGER PRIMARY KEY,
    user_id         INTEGER NOT NULL REFERENCES users(id),
    job_id          INTEGER REFERENCES jobs(id),
    request_id      INTEGER REFERENCES data_requests(id),
    event           TEXT    NOT NULL CHECK (event IN ('started', 'ended', 'retried', 'data_request')),
    channel         TEXT    NOT NULL CHECK (channel IN ('email', 'webhook')),
    target          TEXT    NOT NULL,
    snapshot        TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'PENDING'
                            CHECK (state IN ('PENDING', 'SENDING', 'DELIVERED', 'FAILED')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT,
    delivered_at    INTEGER,
    CHECK ((job_id IS NULL) <> (request_id IS NULL))
);
INSERT INTO notification_outbox_new (id, user_id, job_id, event, channel, target, snapshot, created_at, state, attempts,
                                     next_attempt_at, last_error, delivered_at)
    SELECT id, user_id, job_id, event, channel, target, snapshot, created_at, state, attempts, next_attempt_at,
           last_error, delivered_at FROM notification_outbox;
DROP TABLE notification_outbox;
ALTER TABLE notification_outbox_new RENAME TO notification_outbox;
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
