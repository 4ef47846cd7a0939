-- How each user signs in (api.md "Auth"): `password` or `oidc`; `local`
-- users may use a password even with `auth.passwords = false` (the
-- break-glass accounts: the seeded admin). Tokens carry whether the user
-- made them by name for scripts (personal) or a sign-in issued them.
ALTER TABLE users ADD COLUMN auth TEXT NOT NULL DEFAULT 'password' CHECK (auth IN ('password', 'oidc'));
ALTER TABLE users ADD COLUMN local INTEGER NOT NULL DEFAULT 0 CHECK (local IN (0, 1));
UPDATE users SET local = 1 WHERE username = 'admin' AND role = 'admin';
-- The primary group jobs run with (the directory's gidNumber); null = the
-- uid's own number, as before.
ALTER TABLE users ADD COLUMN unix_gid INTEGER;
-- The directory's other groups (their gidNumbers, comma-separated): the
-- supplementary groups jobs run with; null = none.
ALTER TABLE users ADD COLUMN unix_groups TEXT;
