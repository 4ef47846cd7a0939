-- Job ids are never given again to a job whose id the output folder has
-- seen (#44): after a restore, the database's newest job is older than
-- what `executor.output_root` holds (attempt records, logs, outputs), and
-- a new job given such an id would be "adopted" from another job's past.
-- At each start the server raises this floor to the highest id found
-- there; a new job's id is above both it and every id in the table.
CREATE TABLE job_id_floor (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO job_id_floor (id, value) VALUES (1, 0);
