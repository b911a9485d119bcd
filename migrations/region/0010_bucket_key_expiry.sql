-- Bucket keys minted as R2 temporary credentials (BUCKET_KEYS_MODE=r2) stop working after their TTL:
-- the expiry is kept so the key is listed as expired and no longer counts towards the active limit.
-- Keys of the local S3 endpoint never expire (NULL).
ALTER TABLE bucket_keys ADD COLUMN expires_at TEXT;
-- Keys minted in r2 mode before this column existed (no sealed secret is kept for them) got 7 days too.
UPDATE bucket_keys SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '+7 days') WHERE secret_box = '' AND expires_at IS NULL;
