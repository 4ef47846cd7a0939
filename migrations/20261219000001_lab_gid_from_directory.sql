-- A lab's gid taken from its group in the university's directory (policy
-- §13: the share's group is the one the site's nodes give every member's
-- job) is never moved to make room for another lab; one the platform
-- handed out from storage.lab_gid_range is.
ALTER TABLE labs ADD COLUMN unix_gid_from_directory INTEGER NOT NULL DEFAULT 0;
