-- Reviews of checked items and learning from them (docs/learning.md), in the organisation's home region.
-- One row per item: the first verdict is kept. A `genuine` verdict (POST .../confirm) may be learned as a
-- reference; a `forged` one (POST .../reject) never is.
CREATE TABLE check_reviews (
  org_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  item_index INTEGER NOT NULL,
  subject_reference TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('genuine', 'forged')),
  reviewed_by TEXT NOT NULL,            -- audit actor
  reviewed_at TEXT NOT NULL,
  -- queued: waiting for the learning consumer; learned; refused (learning_reason says why);
  -- off: learning was off when confirmed; not_applicable: a forged verdict; evicted: removed by the cap;
  -- unlearned: removed by POST .../references/unlearn.
  learning TEXT NOT NULL CHECK (learning IN ('queued', 'learned', 'refused', 'off', 'not_applicable', 'evicted', 'unlearned')),
  learning_reason TEXT,
  learning_detail TEXT,
  ref_id TEXT,                          -- the learned reference, once learned
  learned_at TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (org_id, job_id, item_index)
);
CREATE INDEX check_reviews_subject ON check_reviews (org_id, subject_reference, reviewed_at DESC);

-- Source checks that must never be learned again (POST .../references/unlearn). check_id is job_id/index.
CREATE TABLE learning_blocks (
  org_id TEXT NOT NULL,
  subject_reference TEXT NOT NULL,
  check_id TEXT NOT NULL,
  blocked_at TEXT NOT NULL,
  blocked_by TEXT NOT NULL,
  PRIMARY KEY (org_id, subject_reference, check_id)
);
