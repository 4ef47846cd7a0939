-- A lab's gid that moved (policy §13): the share's files of the old gid
-- are regrouped in the background, and the move stays pending here until
-- a whole walk is done (a restart or a cut-short walk resumes it). A gid a
-- lab gave up is never handed out again: that lab's jobs still running
-- carry it.
CREATE TABLE lab_regroups (
    lab_id   BIGINT NOT NULL REFERENCES labs(id) ON DELETE CASCADE,
    from_gid BIGINT NOT NULL,
    since    BIGINT NOT NULL,
    PRIMARY KEY (lab_id, from_gid)
);
CREATE TABLE lab_gids_retired (
    gid        BIGINT PRIMARY KEY,
    -- the lab that gave it up (a directory gid waits for its jobs to end)
    lab_id     BIGINT REFERENCES labs(id) ON DELETE SET NULL,
    retired_at BIGINT NOT NULL
);
