-- Webhook endpoints of both products, the events sent to them, one delivery per (endpoint, event), and
-- every attempt of every delivery (the delivery log, kept 30 days). Plus the history of the
-- organisation's version pin (its upgrades can be rolled back within 72 h).
CREATE TABLE webhook_endpoints (
  org_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,             -- whk_<ulid>
  product TEXT NOT NULL CHECK (product IN ('sig', 'archive')),
  url TEXT NOT NULL,
  description TEXT,
  events TEXT NOT NULL,                 -- JSON array of event types
  enabled INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,                 -- 'manual' or 'failing'
  secret TEXT NOT NULL,                 -- the whsec_ secret, sealed (AES-GCM)
  secret_version INTEGER NOT NULL DEFAULT 1,
  previous_secret TEXT,                 -- sealed; signs beside the new one until previous_expires_at
  previous_expires_at TEXT,
  failing_since TEXT,                   -- first failed attempt since the last success
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (org_id, webhook_id)
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, product, webhook_id DESC);

CREATE TABLE webhook_events (
  org_id TEXT NOT NULL,
  event_id TEXT NOT NULL,               -- evt_...: deterministic for the service's own events
  type TEXT NOT NULL,
  version TEXT NOT NULL,                -- the Service-Version the body is rendered in
  body TEXT NOT NULL,                   -- the exact JSON that is signed and sent
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, event_id)
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);

CREATE TABLE webhook_deliveries (
  org_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,            -- whd_<ulid>
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'succeeded', 'failed')),
  trigger TEXT NOT NULL CHECK (trigger IN ('event', 'manual', 'test')),
  attempts INTEGER NOT NULL DEFAULT 0,  -- attempts made (or being made)
  final_attempt INTEGER NOT NULL,       -- a failure of this attempt is final
  next_attempt_at TEXT,
  lease_until TEXT,                     -- while `sending`: another consumer may take over after this
  last_status_code INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT,
  PRIMARY KEY (org_id, delivery_id),
  -- One delivery per endpoint and event, however often the event is emitted.
  UNIQUE (org_id, webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (org_id, webhook_id, delivery_id DESC);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at);

CREATE TABLE webhook_attempts (
  org_id TEXT NOT NULL,
  attempt_id TEXT NOT NULL,             -- wha_<ulid>
  delivery_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  trigger TEXT NOT NULL,
  started_at TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,                  -- null: no HTTP answer (see error)
  error TEXT,                           -- network error, timeout, refused address
  response_body TEXT,                   -- the first KB of the answer
  succeeded INTEGER NOT NULL,
  PRIMARY KEY (org_id, attempt_id)
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (org_id, webhook_id, attempt_id DESC);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (org_id, delivery_id, attempt);
CREATE INDEX webhook_attempts_started ON webhook_attempts (started_at);

CREATE TABLE version_pin_changes (
  org_id TEXT NOT NULL,
  change_id TEXT NOT NULL,              -- pin_<ulid>
  from_version TEXT NOT NULL,
  to_version TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('upgrade', 'rollback')),
  actor TEXT NOT NULL,
  changed_at TEXT NOT NULL,
  PRIMARY KEY (org_id, change_id)
);
