-- Job dependencies and job arrays (api.md "Jobs"; issue: day-one
-- features). A job with dependencies or in an array is "gated": it may
-- wait in its personal queue for something other than a free slot, so
-- the cycle reads gated jobs apart from the plain personal queue heads
-- (a gated job at the head must not hold back the jobs behind it).
CREATE TABLE job_arrays (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id),
    lab_id       INTEGER NOT NULL REFERENCES labs(id),
    -- as submitted, e.g. "0-15%4"
    spec         TEXT    NOT NULL,
    -- `%N`: at most N elements holding a slot at once; NULL = no limit
    max_running  INTEGER CHECK (max_running IS NULL OR max_running >= 1),
    submitted_at INTEGER NOT NULL
);

ALTER TABLE jobs ADD COLUMN array_id INTEGER REFERENCES job_arrays(id);
ALTER TABLE jobs ADD COLUMN array_index INTEGER;
ALTER TABLE jobs ADD COLUMN gated INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_array ON jobs(array_id, array_index) WHERE array_id IS NOT NULL;

CREATE TABLE job_dependencies (
    job_id INTEGER NOT NULL REFERENCES jobs(id),
    kind   TEXT    NOT NULL CHECK (kind IN ('afterok', 'afterany', 'afternotok')),
    on_job INTEGER NOT NULL REFERENCES jobs(id),
    PRIMARY KEY (job_id, on_job, kind)
) WITHOUT ROWID;
CREATE INDEX job_dependencies_on ON job_dependencies(on_job);

-- What a cycle reads of the personal queues:
--  * of each user's plain (ungated) jobs, the oldest `max_concurrent`
--    (as before, by index seeks);
--  * gated jobs whose dependencies have all ended (met, or never to be
--    met: the policy decides which); of an array, only its oldest such
--    elements, as many as could take a slot this cycle.
-- Gated jobs still waiting on a dependency are not read: they keep the
-- reason DEPENDENCY they were given on submit.
DROP VIEW cycle_waiting_jobs;
DROP INDEX jobs_personal_queue;
CREATE INDEX jobs_personal_queue ON jobs(user_id, state, gated, submitted_at, id);
CREATE INDEX jobs_gated ON jobs(state, gated) WHERE gated = 1;
CREATE VIEW cycle_waiting_jobs AS
    WITH RECURSIVE heads(user_id, submitted_at, id, place, cap) AS (
        SELECT u.id, j.submitted_at, j.id, 1, u.max_concurrent
        FROM users u
        JOIN jobs j ON j.id = (SELECT id FROM jobs
                               WHERE user_id = u.id AND state = 'USER_QUEUE_WAIT' AND gated = 0
                               ORDER BY submitted_at, id LIMIT 1)
        WHERE u.max_concurrent > 0
        UNION ALL
        SELECT h.user_id, j.submitted_at, j.id, h.place + 1, h.cap
        FROM heads h
        JOIN jobs j ON j.id = (SELECT id FROM jobs
                               WHERE user_id = h.user_id AND state = 'USER_QUEUE_WAIT' AND gated = 0
                                 AND (submitted_at, id) > (h.submitted_at, h.id)
                               ORDER BY submitted_at, id LIMIT 1)
        WHERE h.place < h.cap
    ),
    ready AS (
        SELECT j.id, j.array_id, j.user_id,
               ROW_NUMBER() OVER (PARTITION BY j.array_id ORDER BY j.array_index, j.id) AS place
        FROM jobs j
        WHERE j.state = 'USER_QUEUE_WAIT' AND j.gated = 1
          AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs o ON o.id = d.on_job
                          WHERE d.job_id = j.id
                            AND o.state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED'))
    )
    SELECT id FROM jobs WHERE state = 'GLOBAL_QUEUE_WAIT'
    UNION ALL
    SELECT id FROM heads
    UNION ALL
    SELECT r.id FROM ready r
    WHERE r.array_id IS NULL
       OR r.place <= (SELECT MIN(COALESCE(a.max_running, u.max_concurrent), u.max_concurrent)
                      FROM job_arrays a JOIN users u ON u.id = a.user_id WHERE a.id = r.array_id);
