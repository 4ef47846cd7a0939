-- JPU-Share schema. Every timestamp is INTEGER milliseconds since the Unix
-- epoch (UTC); the API renders them as RFC 3339. Usage is in TFLOP-seconds.

CREATE TABLE labs (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    -- decayed cumulative usage, valid at usage_as_of (policy §2)
    usage_value   REAL    NOT NULL DEFAULT 0,
    usage_as_of   INTEGER NOT NULL,
    created_at    INTEGER NOT NULL
);

CREATE TABLE users (
    id              INTEGER PRIMARY KEY,
    username        TEXT    NOT NULL UNIQUE,
    password_hash   TEXT    NOT NULL,
    lab_id          INTEGER NOT NULL REFERENCES labs(id),
    role            TEXT    NOT NULL CHECK (role IN ('researcher', 'admin')),
    unix_uid        INTEGER,
    max_concurrent  INTEGER NOT NULL DEFAULT 2 CHECK (max_concurrent >= 0),
    created_at      INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    id            INTEGER PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- SHA-256 of the token, hex; the token itself is never stored
    token_hash    TEXT    NOT NULL UNIQUE,
    label         TEXT,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    revoked_at    INTEGER,
    last_used_at  INTEGER
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE tiers (
    id                      INTEGER PRIMARY KEY,
    name                    TEXT    NOT NULL UNIQUE,
    display_name            TEXT    NOT NULL,
    vram_gb                 INTEGER NOT NULL CHECK (vram_gb > 0),
    tflops                  REAL    NOT NULL CHECK (tflops > 0),
    sort_order              INTEGER NOT NULL,
    max_gpus                INTEGER NOT NULL CHECK (max_gpus BETWEEN 1 AND 8),
    max_time_limit_minutes  INTEGER NOT NULL DEFAULT 4320,
    slurm_partition         TEXT    NOT NULL,
    cpus_per_gpu            INTEGER NOT NULL DEFAULT 4,
    mem_gb_per_gpu          INTEGER NOT NULL DEFAULT 16,
    active                  INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1))
);

CREATE TABLE nodes (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    -- DRAINING: no new dispatch; DOWN: lost (executor says so)
    state       TEXT    NOT NULL DEFAULT 'UP' CHECK (state IN ('UP', 'DRAINING', 'DOWN')),
    -- where the node came from: an admin / the demo seed, or Slurm discovery
    source      TEXT    NOT NULL DEFAULT 'admin',
    created_at  INTEGER NOT NULL
);

-- One row per physical GPU; a placement is (node, tier) over these rows.
CREATE TABLE gpus (
    id         INTEGER PRIMARY KEY,
    node_id    INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
    tier_id    INTEGER NOT NULL REFERENCES tiers(id),
    gpu_index  INTEGER NOT NULL,
    UNIQUE (node_id, gpu_index)
);

CREATE TABLE workspaces (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    lab_id      INTEGER NOT NULL REFERENCES labs(id),
    base_image  TEXT    NOT NULL,
    packages    TEXT    NOT NULL DEFAULT '[]',
    status      TEXT    NOT NULL DEFAULT 'BUILDING' CHECK (status IN ('BUILDING', 'READY', 'FAILED')),
    image_path  TEXT,
    build_log   TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    UNIQUE (lab_id, name)
);

CREATE TABLE jobs (
    id                  INTEGER PRIMARY KEY,
    name                TEXT    NOT NULL,
    user_id             INTEGER NOT NULL REFERENCES users(id),
    lab_id              INTEGER NOT NULL REFERENCES labs(id),
    state               TEXT    NOT NULL CHECK (state IN ('USER_QUEUE_WAIT', 'GLOBAL_QUEUE_WAIT',
                            'DISPATCHING', 'RUNNING', 'CANCELLING', 'COMPLETED', 'FAILED', 'CANCELLED')),
    command             TEXT    NOT NULL,
    num_gpus            INTEGER NOT NULL CHECK (num_gpus BETWEEN 1 AND 8),
    workspace           TEXT,
    env_json            TEXT    NOT NULL DEFAULT '{}',
    time_limit_minutes  INTEGER NOT NULL,
    -- raised by GPU-OOM escalation (policy §6)
    min_vram_gb         INTEGER NOT NULL DEFAULT 0,
    attempt             INTEGER NOT NULL DEFAULT 1,
    submitted_at        INTEGER NOT NULL,
    queue_entered_at    INTEGER,
    started_at          INTEGER,
    ended_at            INTEGER,
    exit_code           INTEGER,
    end_reason          TEXT,
    usage_tflop_s       REAL    NOT NULL DEFAULT 0,
    node                TEXT,
    tier                TEXT,
    gpu_indices         TEXT,
    -- this cycle's view, written by the scheduler
    rank                INTEGER,
    pending_reason      TEXT,
    -- the reservation (policy §3, §5): at most one job has reserved_node set
    reserved_node       TEXT,
    reserved_tier       TEXT,
    -- reserved GPU indices, comma-separated ("0,1")
    reserved_gpus       TEXT,
    reservation_gpu_seconds REAL NOT NULL DEFAULT 0,
    -- accrued, not yet charged reservation cost (R4: charged at job end)
    reservation_cost    REAL    NOT NULL DEFAULT 0,
    reservation_accrued_at INTEGER,
    cancel_requested_at INTEGER,
    kill_unconfirmed    INTEGER NOT NULL DEFAULT 0,
    -- the last executor error (e.g. a refused dispatch), for the user
    last_error          TEXT,
    output_dir          TEXT
);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_user_state ON jobs(user_id, state);
CREATE INDEX jobs_lab ON jobs(lab_id, id);

CREATE TABLE job_attempts (
    id             INTEGER PRIMARY KEY,
    job_id         INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    attempt        INTEGER NOT NULL,
    tier           TEXT    NOT NULL,
    node           TEXT    NOT NULL,
    gpu_indices    TEXT    NOT NULL,
    -- DISPATCHING until the executor confirms; then RUNNING; then ENDED
    phase          TEXT    NOT NULL DEFAULT 'DISPATCHING' CHECK (phase IN ('DISPATCHING', 'RUNNING', 'ENDED')),
    executor_ref   TEXT,
    started_at     INTEGER NOT NULL,
    ended_at       INTEGER,
    exit_code      INTEGER,
    reason         TEXT,
    usage_tflop_s  REAL    NOT NULL DEFAULT 0,
    UNIQUE (job_id, attempt)
);

-- Every charge to a lab, for the daily series and for auditing the
-- "every GPU-second charged exactly once" invariant.
CREATE TABLE usage_charges (
    id          INTEGER PRIMARY KEY,
    lab_id      INTEGER NOT NULL REFERENCES labs(id),
    job_id      INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    tier        TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('run', 'reservation')),
    amount      REAL    NOT NULL CHECK (amount >= 0),
    charged_at  INTEGER NOT NULL
);
CREATE INDEX usage_charges_lab_time ON usage_charges(lab_id, charged_at);

CREATE TABLE maintenance (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    phase    TEXT    NOT NULL CHECK (phase IN ('NORMAL', 'DRAINING', 'BACKFILL_RECOVERY', 'ACTIVE')),
    message  TEXT,
    since    INTEGER NOT NULL
);

CREATE TABLE backfill_instances (
    id            INTEGER PRIMARY KEY,
    node          TEXT    NOT NULL,
    tier          TEXT    NOT NULL,
    gpu_indices   TEXT    NOT NULL,
    executor_ref  TEXT,
    endpoint      TEXT,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER
);

CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY,
    at       INTEGER NOT NULL,
    actor    TEXT    NOT NULL,
    action   TEXT    NOT NULL,
    target   TEXT,
    detail   TEXT    NOT NULL DEFAULT '{}'
);

-- Secrets the server generates once and keeps across restarts
-- (the session-cookie signing key).
CREATE TABLE server_secrets (
    name   TEXT PRIMARY KEY,
    value  BLOB NOT NULL
);

INSERT INTO maintenance (id, phase, message, since)
VALUES (1, 'NORMAL', NULL, CAST(strftime('%s', 'now') AS INTEGER) * 1000);
