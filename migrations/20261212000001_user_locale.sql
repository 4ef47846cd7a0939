-- The console's language a person chose (NULL: follow the browser).
ALTER TABLE users ADD COLUMN locale TEXT CHECK (locale IN ('en', 'ko'));
