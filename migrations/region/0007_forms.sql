-- Form templates, bucket keys and bucket drops, in the organisation's home region.

-- A template: the blank form (R2), its named signature boxes, and the registration model computed once
-- at creation (R2, JSON per page with boxes) so that checks never recompute it.
CREATE TABLE templates (
  org_id TEXT NOT NULL,
  template_id TEXT NOT NULL,
  name TEXT,
  description TEXT,
  boxes TEXT NOT NULL,              -- JSON: [{name, page, x, y, w, h}] in blank-page pixels
  blank_key TEXT NOT NULL,          -- R2 key of the blank file
  blank_type TEXT NOT NULL,         -- image/png or application/pdf
  blank_bytes INTEGER NOT NULL,
  blank_sha256 TEXT NOT NULL,
  pages TEXT NOT NULL,              -- JSON: [{page, width, height}] of the blank pages that hold boxes
  model_key TEXT NOT NULL,          -- R2 key of the stored registration model
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, template_id)
);
CREATE INDEX templates_org_created ON templates (org_id, created_at DESC, template_id DESC);

-- Bucket keys: S3 access keys of the tenant's drop prefix. The secret is encrypted (AES-GCM with a key
-- from the environment), not hashed: AWS Signature V4 needs the secret itself to recompute a signature.
CREATE TABLE bucket_keys (
  access_key_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  secret_box TEXT NOT NULL,         -- base64 of iv || AES-GCM ciphertext of the secret access key
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  last_used_at TEXT
);
CREATE INDEX bucket_keys_org ON bucket_keys (org_id, created_at DESC);

-- Bucket drops: one row per drop (a batch folder's manifest, or a single file), keyed by the event that
-- started it, so a redelivered event finds its row and does nothing twice.
CREATE TABLE bucket_drops (
  org_id TEXT NOT NULL,
  drop_id TEXT NOT NULL,            -- derived from (object key, eTag, eventTime) of the starting event
  object_key TEXT NOT NULL,         -- the manifest (or single file) that started the drop
  folder TEXT NOT NULL,             -- where summary.json is written
  summary_key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'submitted', 'summarised')),
  job_id TEXT,
  wait_until TEXT,                  -- a batch waits for its files until then
  plan TEXT,                        -- JSON: each manifest item's job item index, or the error that kept it out
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (org_id, drop_id)
);
CREATE INDEX bucket_drops_folder ON bucket_drops (org_id, folder, state);
CREATE INDEX bucket_drops_job ON bucket_drops (org_id, job_id);
