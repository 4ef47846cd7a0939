-- The forecast's runtime predictor reads the most recent ended attempts
-- every 30 s; without this it sorts every attempt ever run.
CREATE INDEX job_attempts_ended ON job_attempts (ended_at DESC, id DESC) WHERE phase = 'ENDED';
