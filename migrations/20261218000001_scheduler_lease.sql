-- Which instance is the scheduler (api.md "High availability"): one row,
-- its epoch raised each time an instance takes it. On SQLite there is one
-- instance, and it takes the lease at each start.
CREATE TABLE scheduler_lease (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    epoch       INTEGER NOT NULL,
    holder      TEXT    NOT NULL,
    renewed_at  INTEGER NOT NULL
);
INSERT INTO scheduler_lease (id, epoch, holder, renewed_at) VALUES (1, 0, '', 0);
