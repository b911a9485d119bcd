-- Subjects (people) and their reference signatures, in the organisation's home region.
CREATE TABLE subjects (
  org_id TEXT NOT NULL,
  subject_reference TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- Bumped in the same batch as every change to the live references; a reference model is stored
  -- only if it was built from the current revision, so concurrent enrolments never store a stale one.
  refs_revision INTEGER NOT NULL DEFAULT 0,
  model_revision INTEGER,               -- revision the stored model was built from
  model_key TEXT,                       -- R2 key of the stored reference model
  last_check_at TEXT,
  last_check_id TEXT,
  last_check_decision TEXT,
  PRIMARY KEY (org_id, subject_reference)
);
-- Newest first with a stable tiebreak, for paging.
CREATE INDEX subjects_org_created ON subjects (org_id, created_at DESC, subject_reference DESC);

CREATE TABLE subject_references (
  org_id TEXT NOT NULL,
  subject_reference TEXT NOT NULL,
  ref_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('anchor', 'learned')),
  source TEXT NOT NULL CHECK (source IN ('signature_card', 'confirmed_past', 'unverified', 'learned')),
  status TEXT NOT NULL CHECK (status IN ('queued', 'enrolled', 'rejected')),
  rejected_reason TEXT,                 -- no_signature, unreadable, corrupt_file, ...
  rejected_detail TEXT,
  method TEXT NOT NULL,                 -- upload, url, learned
  source_url TEXT,                      -- for url enrolments: the URL the caller gave
  file_key TEXT NOT NULL,               -- R2 key of the stored original
  content_type TEXT NOT NULL,
  byte_size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  page INTEGER,                         -- where the signature was found
  box TEXT,                             -- JSON {x,y,w,h} in page pixels
  quality TEXT,                         -- JSON quality figures
  features TEXT,                        -- JSON features from the verification core
  outlier INTEGER NOT NULL DEFAULT 0,   -- flagged by the reference model
  learned_from TEXT,                    -- check id (job_id/index) a learned reference came from
  upload_id TEXT NOT NULL,              -- distinguishes successive uploads of the same ref_id
  created_at TEXT NOT NULL,
  enrolled_at TEXT,
  PRIMARY KEY (org_id, subject_reference, ref_id)
);
