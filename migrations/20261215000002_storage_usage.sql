-- What each home and lab share holds, as last measured (policy §13): in
-- the background every storage.scan_minutes and after each job's end;
-- uploads and deletes through the site count at once.
CREATE TABLE storage_usage (
    place       TEXT    NOT NULL PRIMARY KEY,  -- 'home/USER' or 'labs/LAB'
    used_bytes  INTEGER NOT NULL,
    measured_at INTEGER NOT NULL
);
