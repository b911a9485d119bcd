-- Published policy versions of each organisation (immutable). The built-in `default` policy is version 1
-- and is never stored: a tenant's own `default` versions start at 2.
CREATE TABLE policies (
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  spec TEXT NOT NULL,             -- canonical JSON of the complete PolicySpec
  created_by TEXT NOT NULL,       -- audit actor
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, name, version)
);
