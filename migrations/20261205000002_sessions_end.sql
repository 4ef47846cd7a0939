-- A password change or reset, or disabling a user, ends every other
-- session and token of theirs: sessions carry the epoch they were made
-- in and are honoured only while it is the user's current one.
ALTER TABLE users ADD COLUMN session_epoch INTEGER NOT NULL DEFAULT 0;
-- A disabled user cannot sign in; their tokens and sessions stop working.
ALTER TABLE users ADD COLUMN disabled_at INTEGER;
