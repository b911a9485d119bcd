-- The job id a drop is about to make its job under, recorded (with the drop's plan) by the delivery holding
-- the drop's lock before it creates the job (services/bucket-drops.ts). Unique per organisation, so two
-- drops naming one job_id can never both come to point at one job: the second one's reservation fails and
-- it is refused. A drop that ends without a job gives its reservation up.
ALTER TABLE bucket_drops ADD COLUMN intended_job_id TEXT;
-- Drops recorded before: each job id stays with the first drop that submitted it (drops that already
-- share a job keep it; only new drops reserve).
UPDATE bucket_drops SET intended_job_id = job_id
WHERE job_id IS NOT NULL
  AND rowid IN (SELECT MIN(rowid) FROM bucket_drops WHERE job_id IS NOT NULL GROUP BY org_id, job_id);
CREATE UNIQUE INDEX bucket_drops_intended_job ON bucket_drops (org_id, intended_job_id) WHERE intended_job_id IS NOT NULL;
