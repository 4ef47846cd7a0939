-- Datasets and data requests (policy §13, api.md "Research data").
CREATE TABLE datasets (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    -- JSON array of lab names; NULL = open to every lab
    labs        TEXT,
    -- a folder registered as it is, or a URL fetched into storage.root
    source_path TEXT,
    source_url  TEXT,
    sha256      TEXT,
    state       TEXT    NOT NULL CHECK (state IN ('FETCHING', 'READY', 'FAILED')),
    size_bytes  INTEGER NOT NULL DEFAULT 0,
    -- what the fetch did: entries skipped, why it failed
    fetch_log   TEXT    NOT NULL DEFAULT '',
    request_id  INTEGER REFERENCES data_requests(id),
    created_at  INTEGER NOT NULL,
    CHECK ((source_path IS NULL) <> (source_url IS NULL))
);

CREATE TABLE data_requests (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL,
    url             TEXT    NOT NULL,
    sha256          TEXT,
    reason          TEXT    NOT NULL,
    user_id         INTEGER NOT NULL REFERENCES users(id),
    lab_id          INTEGER NOT NULL REFERENCES labs(id),
    state           TEXT    NOT NULL DEFAULT 'OPEN'
                            CHECK (state IN ('OPEN', 'APPROVED', 'READY', 'REJECTED', 'FAILED')),
    decided_by      INTEGER REFERENCES users(id),
    decision_reason TEXT,
    -- why it FAILED
    message         TEXT,
    created_at      INTEGER NOT NULL,
    decided_at      INTEGER
);
CREATE INDEX data_requests_lab ON data_requests(lab_id, id);
