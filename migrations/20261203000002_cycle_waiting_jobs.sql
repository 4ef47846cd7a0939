-- The waiting jobs a scheduler cycle reads (and whose marks it compares):
-- the whole global queue, but of each personal queue only its oldest
-- `max_concurrent` jobs, the most one cycle can promote. A user with
-- thousands of jobs queued is otherwise read in full every cycle.
CREATE VIEW cycle_waiting_jobs AS
    SELECT id FROM jobs WHERE state = 'GLOBAL_QUEUE_WAIT'
    UNION ALL
    SELECT p.id
    FROM (SELECT id, user_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY submitted_at, id) AS place
          FROM jobs WHERE state = 'USER_QUEUE_WAIT') p
    JOIN users u ON u.id = p.user_id
    WHERE p.place <= u.max_concurrent;
