-- Without a directory, the provider is asked again about each campus
-- account on a schedule (#42 I3): a person it dropped, or who lost every
-- lab group, kept their sessions and 365-day tokens. The refresh token it
-- gave at sign-in is what it is asked with (replaced when it rotates;
-- cleared when the account is linked to another identity).
ALTER TABLE campus_identities ADD COLUMN refresh_token TEXT;
