-- The token a personal token was made with: revoking a token revokes what
-- was made with it, all the way down (a child once outlived its parent's
-- revocation: #42 T1).
ALTER TABLE api_tokens ADD COLUMN parent_id INTEGER REFERENCES api_tokens(id) ON DELETE SET NULL;
CREATE INDEX api_tokens_parent ON api_tokens(parent_id);
