-- Bucket keys minted as R2 temporary credentials (BUCKET_KEYS_MODE=r2) stop working after their TTL:
-- the expiry is kept so the key is listed as expired and no longer counts towards the active limit.
-- Keys of the local S3 endpoint never expire (NULL).
ALTER TABLE bucket_keys ADD COLUMN expires_at TEXT;
