-- How many writes committed (#45): with several instances on PostgreSQL
-- one instance's commits are not counted in another's memory, so each
-- write there adds one here in its own transaction, and the queue views'
-- cache and the scheduler's "did anything change since I read?" read it.
-- SQLite has one instance, which counts in memory; the row stays 0 there.
CREATE TABLE write_counts (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    commits     INTEGER NOT NULL,
    -- of those, the ones that may change a plan (all but adding jobs)
    plan_inputs INTEGER NOT NULL
);
INSERT INTO write_counts (id, commits, plan_inputs) VALUES (1, 0, 0);
