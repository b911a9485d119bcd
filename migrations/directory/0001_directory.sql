-- The global directory: organisations (with their parents and home regions) and API keys.
-- Everything else an organisation owns lives in its home region's database.
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,                  -- org_<ulid>
  name TEXT NOT NULL,
  parent_id TEXT REFERENCES orgs (id),
  region TEXT NOT NULL CHECK (region IN ('us', 'eu')),
  moving_to TEXT CHECK (moving_to IN ('us', 'eu')),  -- set while a move to another region runs
  moving_since TEXT,
  billing TEXT NOT NULL CHECK (billing IN ('active', 'inactive', 'canceled', 'parent')),
  pinned_version TEXT NOT NULL,
  learning INTEGER NOT NULL DEFAULT 1,
  allow_hosts TEXT NOT NULL DEFAULT '[]',     -- JSON array of host names
  allow_buckets TEXT NOT NULL DEFAULT '[]',   -- JSON array of bucket names
  monthly_quota INTEGER,                      -- checked items per UTC month; NULL = unlimited
  inbox_ttl_seconds INTEGER NOT NULL DEFAULT 86400,
  suspended INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX orgs_parent ON orgs (parent_id);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,                  -- the fixed-length key id carried inside the key
  org_id TEXT NOT NULL REFERENCES orgs (id),
  name TEXT,
  prefix TEXT NOT NULL,                 -- for display only, never for lookup
  secret_hash TEXT NOT NULL,            -- hex SHA-256 of the secret part
  permissions TEXT NOT NULL,            -- JSON array of permissions
  created_by TEXT NOT NULL,             -- actor that minted it: operator, key:<id>, user:<id>
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT
);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at DESC);
