-- Policy §8: every job runs as its own user's unix uid. Users without a
-- configured `unix_uid` get one of their own from `executor.uid_range`
-- (local executor), kept here for good; no two users ever share one.
ALTER TABLE users ADD COLUMN allocated_uid INTEGER;
CREATE UNIQUE INDEX users_allocated_uid ON users(allocated_uid) WHERE allocated_uid IS NOT NULL;
