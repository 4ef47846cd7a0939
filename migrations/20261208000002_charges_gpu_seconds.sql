-- Usage reports in GPU-hours (api.md "Notifications and reports"): each
-- charge keeps the GPU-seconds it was for. Charges made before this
-- column existed get theirs back from the tier's TFLOPS (a charge is
-- GPU-seconds × the tier's TFLOPS, policy §2).
ALTER TABLE usage_charges ADD COLUMN gpu_seconds REAL NOT NULL DEFAULT 0;
UPDATE usage_charges
   SET gpu_seconds = amount / (SELECT t.tflops FROM tiers t WHERE t.name = usage_charges.tier)
 WHERE EXISTS (SELECT 1 FROM tiers t WHERE t.name = usage_charges.tier AND t.tflops > 0);
-- reports read a time window across every lab
CREATE INDEX usage_charges_time ON usage_charges(charged_at);
