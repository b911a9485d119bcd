-- Audit log of each organisation, kept in its home region with the rest of its data.
CREATE TABLE audit_log (
  id TEXT PRIMARY KEY,            -- aud_<ulid>: sorts by time
  org_id TEXT NOT NULL,
  actor TEXT NOT NULL,            -- key:<id>, user:<id>, session:<id>, operator
  action TEXT NOT NULL,           -- e.g. policy.update, org.act_as, subject.delete
  target TEXT NOT NULL,
  detail TEXT,                    -- JSON, optional
  request_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX audit_log_org_time ON audit_log (org_id, id DESC);
