/**
 * Webhooks as an application service: endpoints (with their secret shown once), the fan-out of an
 * event to the endpoints that chose it (each delivery recorded once, then handed to WEBHOOK_QUEUE),
 * test sends and redeliveries.
 *
 * Exactly once per endpoint and event: the service's own events have deterministic ids (job, item and
 * kind), and a delivery is unique per (endpoint, event), so an event emitted again after a redelivered
 * queue message finds its deliveries recorded and sends nothing more.
 */
import { configOf } from "../config";
import type { Env } from "../env";
import type { Org, RegionStore } from "../domain/tenancy";
import { newId } from "../domain/ids";
import { ProblemError, invalidField, notFound } from "../http/problem";
import { REGISTRY, latestVersion, versionProblem } from "../versions/registry";
import { renderForVersion } from "../versions/render";
import type { VersionRegistry } from "../versions/types";
import { eventKind, productReceives, subscribableTypes, type EventEnvelope, type WebhookProduct } from "../domain/webhook-events";
import { newSigningSecret, PREVIOUS_SECRET_TTL_MS } from "../domain/webhook-signature";
import { WEBHOOK_URL_REFUSAL_TEXT, refuseWebhookUrl } from "../domain/webhook-url";
import { scheduledAttempts } from "../domain/webhook-retry";
import { webhooksRepo, type DeliveryRow, type DeliveryTrigger, type EndpointRow } from "../storage/webhooks";
import { openSecret, sealSecret } from "./webhook-secrets";

/** At most this many endpoints per organisation and product. */
export const MAX_ENDPOINTS = 20;

/** One message of WEBHOOK_QUEUE: attempt `attempt` of one delivery, due at `due` (epoch ms). */
export interface WebhookMessage {
  kind: "webhook_delivery";
  orgId: string;
  deliveryId: string;
  attempt: number;
  due: number;
}

export interface WebhookDeps {
  env: Env;
  org: Org;
  store: RegionStore;
  /** Injected by tests; production renders with the real registry. */
  registry?: VersionRegistry;
  now?: () => Date;
}

export function devHosts(env: Env): string[] {
  return configOf(env).webhooks.devHosts;
}

export function retryConfigOf(env: Env) {
  return configOf(env).webhooks.retry;
}

/** 400 naming `field` unless the URL may receive webhooks. */
export function assertEndpointUrl(env: Env, url: string, field = "body.url"): void {
  const refusal = refuseWebhookUrl(url, devHosts(env));
  if (refusal) {
    throw new ProblemError("invalid_request", `${field}: the URL ${WEBHOOK_URL_REFUSAL_TEXT[refusal]}.`, {
      extensions: { reason: refusal, errors: [{ field, message: WEBHOOK_URL_REFUSAL_TEXT[refusal] }] },
    });
  }
}

/** 400 naming the first event an endpoint of `product` cannot choose. */
export function assertEvents(product: WebhookProduct, events: string[], field = "body.events"): string[] {
  const allowed = subscribableTypes(product);
  for (const [i, e] of events.entries()) {
    if (!allowed.includes(e)) {
      throw invalidField(
        `${field}.${i}`,
        `${e} is not an event ${product === "archive" ? "archive" : "verification"} endpoints can choose; choose among ${allowed.join(", ")}`,
      );
    }
  }
  return [...new Set(events)];
}

export async function createEndpoint(
  deps: WebhookDeps,
  product: WebhookProduct,
  input: { url: string; events: string[]; description?: string | null; enabled?: boolean },
): Promise<{ endpoint: EndpointRow; secret: string }> {
  assertEndpointUrl(deps.env, input.url);
  const events = assertEvents(product, input.events);
  const repo = webhooksRepo(deps.store.db);
  if ((await repo.countEndpoints(deps.org.id, product)) >= MAX_ENDPOINTS) {
    throw new ProblemError(
      "conflict",
      `The organisation has ${MAX_ENDPOINTS} ${product === "archive" ? "archive" : "verification"} webhook endpoints; delete one first.`,
    );
  }
  const now = (deps.now?.() ?? new Date()).toISOString();
  const webhookId = newId("whk");
  const secret = newSigningSecret();
  const endpoint: EndpointRow = {
    org_id: deps.org.id,
    webhook_id: webhookId,
    product,
    url: input.url,
    description: input.description ?? null,
    events: JSON.stringify(events),
    enabled: input.enabled === false ? 0 : 1,
    disabled_reason: input.enabled === false ? "manual" : null,
    secret: await sealSecret(deps.env, webhookId, secret),
    secret_version: 1,
    previous_secret: null,
    previous_expires_at: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
  };
  await repo.insertEndpoint(endpoint);
  return { endpoint, secret };
}

export async function mustGetEndpoint(
  deps: Pick<WebhookDeps, "org" | "store">,
  product: WebhookProduct,
  webhookId: string,
): Promise<EndpointRow> {
  const row = await webhooksRepo(deps.store.db).endpoint(deps.org.id, webhookId);
  // An endpoint of the other product is as missing as another tenant's.
  if (!row || row.product !== product) throw notFound("webhook endpoint");
  return row;
}

/** A new secret; the old one keeps signing beside it for 24 h. */
export async function rotateSecret(deps: WebhookDeps, endpoint: EndpointRow): Promise<{ secret: string; previousExpiresAt: string }> {
  const now = deps.now?.() ?? new Date();
  const secret = newSigningSecret();
  const previousExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_TTL_MS).toISOString();
  await webhooksRepo(deps.store.db).rotateSecret(
    deps.org.id,
    endpoint.webhook_id,
    await sealSecret(deps.env, endpoint.webhook_id, secret),
    endpoint.secret,
    previousExpiresAt,
    now.toISOString(),
  );
  return { secret, previousExpiresAt };
}

/** The endpoint's secrets in plain form, for signing. */
export async function endpointSecrets(env: Env, endpoint: EndpointRow) {
  return {
    current: await openSecret(env, endpoint.webhook_id, endpoint.secret),
    previous:
      endpoint.previous_secret && endpoint.previous_expires_at
        ? {
            secret: await openSecret(env, endpoint.webhook_id, endpoint.previous_secret),
            expiresAt: Date.parse(endpoint.previous_expires_at),
          }
        : null,
  };
}

/** The version webhooks of the organisation are rendered in: its pin, else (unknown or sunset) the latest. */
export function webhookVersion(org: Org, now: Date, registry: VersionRegistry = REGISTRY): string {
  return versionProblem(org.pinnedVersion, now, registry) === null ? org.pinnedVersion : latestVersion(registry);
}

export interface NewEvent {
  id: string;
  type: string;
  /** The payload in the latest shape; rendered in the organisation's pinned version here. */
  data: unknown;
  /** When it happened; default now. */
  at?: string;
}

/** The signed body of an event, rendered in `version`. */
export function renderEvent(org: Org, event: NewEvent, version: string, at: string, registry: VersionRegistry = REGISTRY): string {
  const envelope: EventEnvelope = {
    id: event.id,
    type: event.type,
    timestamp: at,
    version,
    org_id: org.id,
    data: renderForVersion(event.type, event.data, version, registry),
  };
  return JSON.stringify(envelope);
}

async function enqueue(env: Env, deliveries: DeliveryRow[], due: number): Promise<void> {
  if (deliveries.length === 0) return;
  const messages = deliveries.map((d) => ({
    // A delivery left `sending` by a consumer that died is taken over at the same attempt.
    body: {
      kind: "webhook_delivery",
      orgId: d.org_id,
      deliveryId: d.delivery_id,
      attempt: d.status === "sending" ? d.attempts : d.attempts + 1,
      due,
    } satisfies WebhookMessage,
  }));
  for (let i = 0; i < messages.length; i += 100) await env.WEBHOOK_QUEUE.sendBatch(messages.slice(i, i + 100));
}

/**
 * Sends an event to every enabled endpoint of `product` that chose it. Nothing is stored when no
 * endpoint wants it. Safe to call again for the same event id: no endpoint gets it twice.
 */
export async function publishEvent(
  deps: WebhookDeps,
  product: WebhookProduct,
  event: NewEvent,
  only?: EndpointRow,
  /** The organisation's enabled endpoints of `product`, when the caller read them already (one read per queue batch). */
  enabled?: EndpointRow[],
): Promise<{ eventId: string; deliveries: DeliveryRow[]; duplicate: boolean }> {
  const kind = eventKind(event.type);
  if (!kind || !productReceives(product, event.type)) throw new Error(`${event.type} is not an event of product ${product}`);
  const repo = webhooksRepo(deps.store.db);
  const targets = only
    ? [only]
    : (enabled ?? (await repo.enabledEndpoints(deps.org.id, product))).filter(
        (e) => kind.subscribable && (JSON.parse(e.events) as string[]).includes(event.type),
      );
  if (targets.length === 0) return { eventId: event.id, deliveries: [], duplicate: false };

  const now = deps.now?.() ?? new Date();
  const nowIso = now.toISOString();
  const existing = await repo.event(deps.org.id, event.id);
  const at = existing?.created_at ?? event.at ?? nowIso;
  const version = existing?.version ?? webhookVersion(deps.org, now, deps.registry);
  const body = existing?.body ?? renderEvent(deps.org, event, version, at, deps.registry);
  const trigger: DeliveryTrigger = only ? "test" : "event";
  // A test send is one attempt; an event follows the retry schedule.
  const finalAttempt = only ? 1 : scheduledAttempts(retryConfigOf(deps.env));
  const rows: DeliveryRow[] = targets.map((e) => ({
    org_id: deps.org.id,
    delivery_id: newId("whd"),
    webhook_id: e.webhook_id,
    event_id: event.id,
    event_type: event.type,
    status: "pending",
    trigger,
    attempts: 0,
    final_attempt: finalAttempt,
    next_attempt_at: nowIso,
    lease_until: null,
    last_status_code: null,
    last_error: null,
    created_at: nowIso,
    updated_at: nowIso,
    completed_at: null,
  }));
  const fresh = await repo.recordEvent({ org_id: deps.org.id, event_id: event.id, type: event.type, version, body, created_at: at }, rows);
  await enqueue(deps.env, fresh, now.getTime());
  return { eventId: event.id, deliveries: fresh, duplicate: existing !== null && fresh.length === 0 };
}

/** A test send: a `webhook.test` message to this endpoint only (also when it is disabled). */
export async function testSend(deps: WebhookDeps, endpoint: EndpointRow): Promise<DeliveryRow> {
  const { deliveries } = await publishEvent(
    deps,
    endpoint.product,
    {
      id: newId("evt"),
      type: "webhook.test",
      data: { webhook_id: endpoint.webhook_id, message: "This is a test message sent on request." },
    },
    endpoint,
  );
  return deliveries[0];
}

/** One more attempt of a finished delivery, now. 409 while it is under way or the endpoint is disabled. */
export async function redeliver(deps: WebhookDeps, endpoint: EndpointRow, deliveryId: string): Promise<DeliveryRow> {
  const repo = webhooksRepo(deps.store.db);
  const delivery = await repo.delivery(deps.org.id, deliveryId);
  if (!delivery || delivery.webhook_id !== endpoint.webhook_id) throw notFound("delivery");
  if (!endpoint.enabled)
    throw new ProblemError("conflict", "The endpoint is disabled; enable it (PATCH enabled: true) before redelivering.");
  const now = deps.now?.() ?? new Date();
  const reopened = await repo.reopen(deps.org.id, deliveryId, now.toISOString());
  if (!reopened) {
    throw new ProblemError(
      "conflict",
      `The delivery is still ${delivery.status}${delivery.next_attempt_at ? `; its next attempt is due at ${delivery.next_attempt_at}` : ""}.`,
    );
  }
  await enqueue(deps.env, [reopened], now.getTime());
  return reopened;
}

/** Re-sends the queue message of deliveries whose message was lost (the cron sweep). */
export async function requeueOverdue(env: Env, db: D1Database, now: Date, graceMs = 15 * 60 * 1000): Promise<number> {
  const overdue = await webhooksRepo(db).overdue(new Date(now.getTime() - graceMs).toISOString(), 200);
  await enqueue(env, overdue, now.getTime());
  return overdue.length;
}
