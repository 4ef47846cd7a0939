-- Policy §6's GPU-OOM signatures as admins set them (PUT
-- /v1/admin/oom-patterns, the admin page). No row: the built-in list.
CREATE TABLE oom_patterns (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    patterns_json TEXT    NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- The tier a job's accrued reservation cost belongs to, kept from its
-- dispatch to its end (R4 charges it then): after a swap the job runs on
-- another tier than the one it held.
ALTER TABLE jobs ADD COLUMN accrued_tier TEXT;

-- The part of an attempt's usage that was reservation time (R4 charges it
-- with the run), shown apart from the run in the job view.
ALTER TABLE job_attempts ADD COLUMN reserved_tflop_s REAL NOT NULL DEFAULT 0;
