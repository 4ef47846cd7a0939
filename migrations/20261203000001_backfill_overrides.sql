-- LLM backfill settings changed by admins at runtime (the admin page,
-- PATCH /v1/admin/backfill). A NULL column keeps the configuration
-- file's value; a set one overrides it, across restarts.
CREATE TABLE backfill_overrides (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    enabled            INTEGER CHECK (enabled IN (0, 1)),
    command            TEXT,
    min_idle_seconds   INTEGER CHECK (min_idle_seconds >= 0),
    gpus_per_instance  INTEGER CHECK (gpus_per_instance BETWEEN 1 AND 8),
    updated_at         INTEGER NOT NULL,
    updated_by         TEXT    NOT NULL
);
