-- Interactive sessions (policy §12): a job whose script is an app the
-- researcher opens through the site. `kind` tells them from batch jobs;
-- `session_app` names the app; `session_ready_at` is when the app first
-- answered (STARTING → READY); `session_active_at` the last traffic
-- through /s/{id}/ or busy kernel seen (idle end). `cancel_reason` is
-- the end_reason a running job that is asked to stop ends with (IDLE for
-- a session nobody used; CANCELLED when NULL).
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'batch' CHECK (kind IN ('batch', 'session'));
ALTER TABLE jobs ADD COLUMN session_app TEXT;
ALTER TABLE jobs ADD COLUMN session_ready_at INTEGER;
ALTER TABLE jobs ADD COLUMN session_active_at INTEGER;
ALTER TABLE jobs ADD COLUMN cancel_reason TEXT;
CREATE INDEX jobs_unfinished_sessions ON jobs (user_id) WHERE kind = 'session' AND ended_at IS NULL;
