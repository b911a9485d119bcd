-- The files a batch's manifest names that have not arrived yet: a JSON array of names, stored when the
-- manifest is first read (services/bucket-drops.ts) and crossed off one by one by the files' own events,
-- so a file's event reads nothing from the bucket. NULL until then, and for a single file's drop.
ALTER TABLE bucket_drops ADD COLUMN missing TEXT;
