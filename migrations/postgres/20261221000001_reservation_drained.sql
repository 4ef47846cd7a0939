-- `planned`'s drains (#46, policy §11): GPUs booked for a waiting job that
-- stood idle when the last cycle ended, charged to its lab like the GPUs
-- it holds (reserved_gpus) until the next cycle.
ALTER TABLE jobs ADD COLUMN reservation_drained BIGINT NOT NULL DEFAULT 0;
