-- Client session tokens (spec 4.4), in the organisation's home region. Only the token's hash is kept.
CREATE TABLE sessions (
  org_id TEXT NOT NULL,
  session_id TEXT NOT NULL,             -- the 16-character id inside the token (public id: ses_<id>)
  token_hash TEXT NOT NULL,             -- SHA-256 hex of the token's secret
  subject_reference TEXT NOT NULL,
  policy TEXT,                          -- policy name of the session's check (default policy when null)
  input_type TEXT NOT NULL,
  reference TEXT,                       -- the check reference recorded on the session's check
  process TEXT,
  metadata TEXT,                        -- JSON, the check's metadata
  created_by TEXT NOT NULL,             -- audit actor that minted it
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT,
  check_started_at TEXT,                -- set when its one check is claimed
  PRIMARY KEY (org_id, session_id)
);
-- Tokens are looked up by id alone (the token names no organisation).
CREATE UNIQUE INDEX sessions_id ON sessions (session_id);
-- Deleting a subject revokes its sessions.
CREATE INDEX sessions_subject ON sessions (org_id, subject_reference);
