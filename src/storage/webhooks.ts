/**
 * Webhook rows in the organisation's home region: endpoints, events, deliveries and the attempt log.
 * Secrets arrive here already sealed; this module never sees a plain secret.
 */
import type { WebhookProduct } from "../domain/webhook-events";

export interface EndpointRow {
  org_id: string;
  webhook_id: string;
  product: WebhookProduct;
  url: string;
  description: string | null;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  secret_version: number;
  previous_secret: string | null;
  previous_expires_at: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = "pending" | "sending" | "succeeded" | "failed";
export type DeliveryTrigger = "event" | "manual" | "test";

export interface DeliveryRow {
  org_id: string;
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  trigger: DeliveryTrigger;
  attempts: number;
  final_attempt: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface AttemptRow {
  org_id: string;
  attempt_id: string;
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  trigger: string;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  succeeded: number;
}

export interface EventRow {
  org_id: string;
  event_id: string;
  type: string;
  version: string;
  body: string;
  created_at: string;
}

/** Newest-first paging by id (ULIDs sort by creation). */
export interface Page {
  limit: number;
  /** The id of the last row of the previous page. */
  after?: string;
}

export function webhooksRepo(db: D1Database) {
  return {
    async insertEndpoint(row: EndpointRow): Promise<void> {
      await db
        .prepare(
          `INSERT INTO webhook_endpoints (org_id, webhook_id, product, url, description, events, enabled, disabled_reason, secret,
             secret_version, previous_secret, previous_expires_at, failing_since, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .bind(
          row.org_id,
          row.webhook_id,
          row.product,
          row.url,
          row.description,
          row.events,
          row.enabled,
          row.disabled_reason,
          row.secret,
          row.secret_version,
          row.previous_secret,
          row.previous_expires_at,
          row.failing_since,
          row.created_at,
          row.updated_at,
        )
        .run();
    },

    async countEndpoints(orgId: string, product: WebhookProduct): Promise<number> {
      const row = await db
        .prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE org_id = ? AND product = ?")
        .bind(orgId, product)
        .first<{ n: number }>();
      return row?.n ?? 0;
    },

    async endpoint(orgId: string, webhookId: string): Promise<EndpointRow | null> {
      return db.prepare("SELECT * FROM webhook_endpoints WHERE org_id = ? AND webhook_id = ?").bind(orgId, webhookId).first<EndpointRow>();
    },

    async listEndpoints(orgId: string, product: WebhookProduct, page: Page): Promise<EndpointRow[]> {
      const { results } = await (page.after
        ? db
            .prepare("SELECT * FROM webhook_endpoints WHERE org_id = ? AND product = ? AND webhook_id < ? ORDER BY webhook_id DESC LIMIT ?")
            .bind(orgId, product, page.after, page.limit + 1)
        : db
            .prepare("SELECT * FROM webhook_endpoints WHERE org_id = ? AND product = ? ORDER BY webhook_id DESC LIMIT ?")
            .bind(orgId, product, page.limit + 1)
      ).all<EndpointRow>();
      return results;
    },

    /** Enabled endpoints of a product (the fan-out of an event filters them by their chosen events). */
    async enabledEndpoints(orgId: string, product: WebhookProduct): Promise<EndpointRow[]> {
      const { results } = await db
        .prepare("SELECT * FROM webhook_endpoints WHERE org_id = ? AND product = ? AND enabled = 1")
        .bind(orgId, product)
        .all<EndpointRow>();
      return results;
    },

    async updateEndpoint(
      orgId: string,
      webhookId: string,
      changes: Partial<Pick<EndpointRow, "url" | "description" | "events" | "enabled" | "disabled_reason" | "failing_since">>,
      now: string,
    ): Promise<void> {
      const cols = Object.keys(changes) as (keyof typeof changes)[];
      if (cols.length === 0) return;
      await db
        .prepare(
          `UPDATE webhook_endpoints SET ${cols.map((c) => `${c} = ?`).join(", ")}, updated_at = ? WHERE org_id = ? AND webhook_id = ?`,
        )
        .bind(...cols.map((c) => changes[c] ?? null), now, orgId, webhookId)
        .run();
    },

    async rotateSecret(
      orgId: string,
      webhookId: string,
      sealedNew: string,
      sealedPrevious: string,
      previousExpiresAt: string,
      now: string,
    ): Promise<void> {
      await db
        .prepare(
          `UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_expires_at = ?, secret_version = secret_version + 1, updated_at = ?
           WHERE org_id = ? AND webhook_id = ?`,
        )
        .bind(sealedNew, sealedPrevious, previousExpiresAt, now, orgId, webhookId)
        .run();
    },

    /** Deletes an endpoint with its deliveries and log. */
    async deleteEndpoint(orgId: string, webhookId: string): Promise<boolean> {
      const [res] = await db.batch([
        db.prepare("DELETE FROM webhook_endpoints WHERE org_id = ? AND webhook_id = ?").bind(orgId, webhookId),
        db.prepare("DELETE FROM webhook_deliveries WHERE org_id = ? AND webhook_id = ?").bind(orgId, webhookId),
        db.prepare("DELETE FROM webhook_attempts WHERE org_id = ? AND webhook_id = ?").bind(orgId, webhookId),
      ]);
      return res.meta.changes > 0;
    },

    /** The first failure since the last success marks the endpoint failing; a success clears it. */
    async markFailing(orgId: string, webhookId: string, at: string): Promise<void> {
      await db
        .prepare("UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE org_id = ? AND webhook_id = ?")
        .bind(at, orgId, webhookId)
        .run();
    },

    async markHealthy(orgId: string, webhookId: string): Promise<void> {
      await db
        .prepare("UPDATE webhook_endpoints SET failing_since = NULL WHERE org_id = ? AND webhook_id = ? AND failing_since IS NOT NULL")
        .bind(orgId, webhookId)
        .run();
    },

    /** Disables an endpoint that is failing; true for the one call that disabled it. */
    async disableFailing(orgId: string, webhookId: string, now: string): Promise<boolean> {
      const res = await db
        .prepare(
          "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'failing', updated_at = ? WHERE org_id = ? AND webhook_id = ? AND enabled = 1",
        )
        .bind(now, orgId, webhookId)
        .run();
      return res.meta.changes === 1;
    },

    async event(orgId: string, eventId: string): Promise<EventRow | null> {
      return db.prepare("SELECT * FROM webhook_events WHERE org_id = ? AND event_id = ?").bind(orgId, eventId).first<EventRow>();
    },

    /**
     * Records an event and one delivery per endpoint, each at most once: an event emitted again (a
     * redelivered queue message) changes nothing. Returns the deliveries that are new.
     */
    async recordEvent(event: EventRow, deliveries: DeliveryRow[]): Promise<DeliveryRow[]> {
      const statements = [
        db
          .prepare("INSERT OR IGNORE INTO webhook_events (org_id, event_id, type, version, body, created_at) VALUES (?, ?, ?, ?, ?, ?)")
          .bind(event.org_id, event.event_id, event.type, event.version, event.body, event.created_at),
        ...deliveries.map((d) =>
          db
            .prepare(
              `INSERT OR IGNORE INTO webhook_deliveries (org_id, delivery_id, webhook_id, event_id, event_type, status, trigger, attempts,
                 final_attempt, next_attempt_at, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, 'pending', ?, 0, ?, ?, ?, ?)`,
            )
            .bind(
              d.org_id,
              d.delivery_id,
              d.webhook_id,
              d.event_id,
              d.event_type,
              d.trigger,
              d.final_attempt,
              d.next_attempt_at,
              d.created_at,
              d.updated_at,
            ),
        ),
      ];
      const results = await db.batch(statements);
      return deliveries.filter((_, i) => results[i + 1].meta.changes === 1);
    },

    async delivery(orgId: string, deliveryId: string): Promise<DeliveryRow | null> {
      return db
        .prepare("SELECT * FROM webhook_deliveries WHERE org_id = ? AND delivery_id = ?")
        .bind(orgId, deliveryId)
        .first<DeliveryRow>();
    },

    async listDeliveries(orgId: string, webhookId: string, page: Page, status?: DeliveryStatus): Promise<DeliveryRow[]> {
      const where = ["org_id = ?", "webhook_id = ?"];
      const args: unknown[] = [orgId, webhookId];
      if (status) {
        where.push("status = ?");
        args.push(status);
      }
      if (page.after) {
        where.push("delivery_id < ?");
        args.push(page.after);
      }
      const { results } = await db
        .prepare(`SELECT * FROM webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY delivery_id DESC LIMIT ?`)
        .bind(...args, page.limit + 1)
        .all<DeliveryRow>();
      return results;
    },

    /**
     * Takes attempt `attempt` of a delivery: from `pending` after attempt-1 attempts, or over from a
     * consumer whose lease ran out (it died mid-attempt). Only one caller can win for each attempt, so a
     * redelivered queue message never sends a message twice at once.
     */
    async claim(orgId: string, deliveryId: string, attempt: number, now: string, leaseUntil: string): Promise<boolean> {
      const res = await db
        .prepare(
          `UPDATE webhook_deliveries SET status = 'sending', attempts = ?3, lease_until = ?5, updated_at = ?4
           WHERE org_id = ?1 AND delivery_id = ?2
             AND ((status = 'pending' AND attempts = ?3 - 1) OR (status = 'sending' AND attempts = ?3 AND lease_until < ?4))`,
        )
        .bind(orgId, deliveryId, attempt, now, leaseUntil)
        .run();
      return res.meta.changes === 1;
    },

    /** Stores one attempt and the delivery's new state together. */
    async recordAttempt(
      attempt: AttemptRow,
      next: { status: DeliveryStatus; nextAttemptAt: string | null; completedAt: string | null },
    ): Promise<void> {
      await db.batch([
        db
          .prepare(
            `INSERT OR IGNORE INTO webhook_attempts (org_id, attempt_id, delivery_id, webhook_id, event_id, event_type, attempt, trigger, started_at,
               duration_ms, status_code, error, response_body, succeeded)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .bind(
            attempt.org_id,
            attempt.attempt_id,
            attempt.delivery_id,
            attempt.webhook_id,
            attempt.event_id,
            attempt.event_type,
            attempt.attempt,
            attempt.trigger,
            attempt.started_at,
            attempt.duration_ms,
            attempt.status_code,
            attempt.error,
            attempt.response_body,
            attempt.succeeded,
          ),
        db
          .prepare(
            `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, completed_at = ?, lease_until = NULL, last_status_code = ?, last_error = ?,
               updated_at = ? WHERE org_id = ? AND delivery_id = ? AND attempts = ?`,
          )
          .bind(
            next.status,
            next.nextAttemptAt,
            next.completedAt,
            attempt.status_code,
            attempt.error,
            attempt.started_at,
            attempt.org_id,
            attempt.delivery_id,
            attempt.attempt,
          ),
      ]);
    },

    /** Ends a delivery without an attempt (its endpoint was deleted or disabled meanwhile). */
    async abandon(orgId: string, deliveryId: string, reason: string, now: string): Promise<void> {
      await db
        .prepare(
          `UPDATE webhook_deliveries SET status = 'failed', last_error = ?, completed_at = ?, updated_at = ?, lease_until = NULL
           WHERE org_id = ? AND delivery_id = ? AND status IN ('pending', 'sending')`,
        )
        .bind(reason, now, now, orgId, deliveryId)
        .run();
    },

    /** Opens a finished delivery for one more (manual) attempt; null when it is still under way. */
    async reopen(orgId: string, deliveryId: string, now: string): Promise<DeliveryRow | null> {
      const res = await db
        .prepare(
          `UPDATE webhook_deliveries SET status = 'pending', trigger = 'manual', final_attempt = attempts + 1, next_attempt_at = ?, completed_at = NULL,
             updated_at = ? WHERE org_id = ? AND delivery_id = ? AND status IN ('succeeded', 'failed')`,
        )
        .bind(now, now, orgId, deliveryId)
        .run();
      return res.meta.changes === 1 ? this.delivery(orgId, deliveryId) : null;
    },

    async attemptsOf(orgId: string, deliveryId: string): Promise<AttemptRow[]> {
      const { results } = await db
        .prepare("SELECT * FROM webhook_attempts WHERE org_id = ? AND delivery_id = ? ORDER BY attempt, attempt_id")
        .bind(orgId, deliveryId)
        .all<AttemptRow>();
      return results;
    },

    async listAttempts(orgId: string, webhookId: string, page: Page, deliveryId?: string): Promise<AttemptRow[]> {
      const where = ["org_id = ?", "webhook_id = ?"];
      const args: unknown[] = [orgId, webhookId];
      if (deliveryId) {
        where.push("delivery_id = ?");
        args.push(deliveryId);
      }
      if (page.after) {
        where.push("attempt_id < ?");
        args.push(page.after);
      }
      const { results } = await db
        .prepare(`SELECT * FROM webhook_attempts WHERE ${where.join(" AND ")} ORDER BY attempt_id DESC LIMIT ?`)
        .bind(...args, page.limit + 1)
        .all<AttemptRow>();
      return results;
    },

    /**
     * Deliveries whose queue message was lost: pending and due longer ago than `before`, or taken by a
     * consumer whose lease ran out before `before` (its message dead-lettered).
     */
    async overdue(before: string, limit: number): Promise<DeliveryRow[]> {
      const { results } = await db
        .prepare(
          `SELECT * FROM webhook_deliveries
           WHERE (status = 'pending' AND next_attempt_at < ?1) OR (status = 'sending' AND lease_until < ?1)
           ORDER BY updated_at LIMIT ?2`,
        )
        .bind(before, limit)
        .all<DeliveryRow>();
      return results;
    },

    /** Drops log rows, finished deliveries and events older than `before` (30-day retention). */
    async sweep(before: string): Promise<number> {
      const results = await db.batch([
        db.prepare("DELETE FROM webhook_attempts WHERE started_at < ?").bind(before),
        db.prepare("DELETE FROM webhook_deliveries WHERE completed_at IS NOT NULL AND completed_at < ?").bind(before),
        db
          .prepare(
            `DELETE FROM webhook_events WHERE created_at < ?1 AND NOT EXISTS (
               SELECT 1 FROM webhook_deliveries d WHERE d.org_id = webhook_events.org_id AND d.event_id = webhook_events.event_id)`,
          )
          .bind(before),
      ]);
      return results.reduce((n, r) => n + r.meta.changes, 0);
    },
  };
}

export type WebhooksRepo = ReturnType<typeof webhooksRepo>;
