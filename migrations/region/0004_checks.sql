-- Check jobs and their items, in the organisation's home region. The Job Durable Object is the
-- authority on a job's progress (it counts completed items exactly once); these rows mirror it for
-- reading and listing, and hold every item's result.
CREATE TABLE check_jobs (
  org_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'rejected')),
  source TEXT NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'bucket')),
  mode TEXT NOT NULL CHECK (mode IN ('sync', 'queued', 'stream')),
  policy TEXT NOT NULL,                 -- <name>@<version> used for every item
  policy_spec TEXT NOT NULL,            -- canonical JSON of that policy version (immutable)
  item_count INTEGER NOT NULL,
  completed_items INTEGER NOT NULL DEFAULT 0,
  metadata TEXT,                        -- JSON, the request's metadata
  created_by TEXT NOT NULL,             -- audit actor
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT,
  inbox_expires_at TEXT NOT NULL,       -- inputs and crops are deleted from R2 after this (inbox_ttl)
  inbox_swept_at TEXT,
  PRIMARY KEY (org_id, job_id)
);
CREATE INDEX check_jobs_org_created ON check_jobs (org_id, created_at DESC, job_id DESC);
CREATE INDEX check_jobs_inbox ON check_jobs (inbox_expires_at) WHERE inbox_swept_at IS NULL;

CREATE TABLE check_items (
  org_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  item_index INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
  subject_reference TEXT,
  reference TEXT,                       -- the caller's check reference
  process TEXT,
  input_type TEXT,
  file_name TEXT,
  spec TEXT NOT NULL,                   -- JSON of the normalised item (target, template_id, references, ...)
  input_key TEXT NOT NULL,              -- R2 key of the stored input in the job's inbox
  page_count INTEGER,
  decision TEXT,                        -- null: no decision (counted and filtered as ERROR)
  score REAL,
  billable INTEGER NOT NULL DEFAULT 0,
  result TEXT,                          -- JSON CheckResult, written once
  created_at TEXT NOT NULL,
  completed_at TEXT,
  PRIMARY KEY (org_id, job_id, item_index)
);
CREATE INDEX check_items_subject ON check_items (org_id, subject_reference, created_at DESC, job_id DESC, item_index DESC);
CREATE INDEX check_items_completed ON check_items (org_id, completed_at);
