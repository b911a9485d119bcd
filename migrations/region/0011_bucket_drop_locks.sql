-- A drop is submitted (or refused) by one delivery of its events at a time: the one holding its lock
-- (services/bucket-drops.ts). lock_owner is that delivery's queue message id, so its own redelivery takes
-- the lock back at once; lock_until ends the lock of a delivery that died without releasing it.
ALTER TABLE bucket_drops ADD COLUMN lock_owner TEXT;
ALTER TABLE bucket_drops ADD COLUMN lock_until TEXT;
