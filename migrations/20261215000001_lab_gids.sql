-- A lab share is group-owned by its lab's gid, which every member's jobs
-- carry (policy §13): one the platform keeps per lab, from
-- storage.lab_gid_range, where the directory gives none.
ALTER TABLE labs ADD COLUMN unix_gid INTEGER;
CREATE UNIQUE INDEX labs_unix_gid ON labs (unix_gid) WHERE unix_gid IS NOT NULL;
