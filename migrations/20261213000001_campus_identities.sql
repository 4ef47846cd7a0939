-- Campus accounts are keyed on the provider's (issuer, sub), never on the
-- name its token carries: a provider user whose preferred_username equals
-- an existing account's name took that account over (#42 I1).
-- `subject` NULL: an account campus sign-in created before identities were
-- kept; its next sign-in by that name links it (the trust it had then).
-- Every other account is linked only by an admin.
CREATE TABLE campus_identities (
    user_id    INTEGER NOT NULL PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    issuer     TEXT    NOT NULL,
    subject    TEXT,
    linked_at  INTEGER NOT NULL,
    UNIQUE (issuer, subject)
);
INSERT INTO campus_identities (user_id, issuer, subject, linked_at)
    SELECT id, '', NULL, 0 FROM users WHERE auth = 'oidc';
