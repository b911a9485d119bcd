/**
 * One attempt of one webhook delivery: claim it, re-check where the endpoint points (DNS may have
 * changed), sign, POST with a deadline, log the attempt (time, status or error, duration, first KB of
 * the answer), and schedule the next attempt, end the delivery, or disable an endpoint that has failed
 * for days and tell the tenant.
 */
import { configOf } from "../config";
import type { Env } from "../env";
import type { Org, RegionStore } from "../domain/tenancy";
import { newId } from "../domain/ids";
import { recordAudit } from "../storage/audit";
import { webhooksRepo, type AttemptRow, type DeliveryRow, type EndpointRow } from "../storage/webhooks";
import { signingHeaders } from "../domain/webhook-signature";
import { isDevHost, isPublicAddress, refuseWebhookUrl, WEBHOOK_URL_REFUSAL_TEXT } from "../domain/webhook-url";
import { retryDelaySeconds, shouldDisable, type RetryConfig } from "../domain/webhook-retry";
import type { VersionRegistry } from "../versions/types";
import { devHosts, endpointSecrets, publishEvent, retryConfigOf, type WebhookMessage } from "./webhooks";

/** How much of an answer the log keeps. */
export const RESPONSE_LOG_BYTES = 1024;
const USER_AGENT = "Countersign-Webhooks/1";

/** Resolves a host name to its addresses (A and AAAA). */
export type Resolver = (host: string) => Promise<string[]>;

export interface DeliveryDeps {
  env: Env;
  org: Org;
  store: RegionStore;
  fetch?: typeof fetch;
  resolve?: Resolver;
  now?: () => Date;
  config?: RetryConfig;
  registry?: VersionRegistry;
  random?: () => number;
}

export type AttemptOutcome =
  | { kind: "done" }
  /** Another consumer holds the attempt; look again after this many seconds. */
  | { kind: "busy"; retryAfterSeconds: number }
  /** The next attempt, to be sent as a queue message. */
  | { kind: "next"; message: WebhookMessage };

const dnsCache = new Map<string, { addresses: string[]; until: number }>();

/** A DNS-over-HTTPS resolver (JSON API), cached for the answers' TTL (at most 60 s). */
export function dohResolver(endpoint: string, fetchImpl: typeof fetch = fetch): Resolver {
  return async (host) => {
    const cached = dnsCache.get(host);
    if (cached && cached.until > Date.now()) return cached.addresses;
    const addresses: string[] = [];
    let ttl = 60;
    for (const type of ["A", "AAAA"]) {
      const res = await fetchImpl(`${endpoint}?name=${encodeURIComponent(host)}&type=${type}`, {
        headers: { Accept: "application/dns-json" },
      });
      if (!res.ok) throw new Error(`DNS lookup answered ${res.status}`);
      const body = (await res.json()) as { Answer?: { type: number; data: string; TTL?: number }[] };
      for (const a of body.Answer ?? []) {
        if (a.type === 1 || a.type === 28) {
          addresses.push(a.data);
          ttl = Math.min(ttl, a.TTL ?? 60);
        }
      }
    }
    dnsCache.set(host, { addresses, until: Date.now() + ttl * 1000 });
    return addresses;
  };
}

/** Why the endpoint may not be reached now, or null. Re-run at every attempt. */
async function refusal(env: Env, url: string, resolve: Resolver): Promise<string | null> {
  const dev = devHosts(env);
  const r = refuseWebhookUrl(url, dev);
  if (r) return `address_not_allowed: the URL ${WEBHOOK_URL_REFUSAL_TEXT[r]}`;
  const parsed = new URL(url);
  if (isDevHost(parsed, dev)) return null;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  // An IP literal was judged by refuseWebhookUrl; a name is judged by what it resolves to now.
  if (/^[0-9.]+$/.test(host) || host.includes(":")) return null;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    return `dns_failed: ${(err as Error).message}`;
  }
  if (addresses.length === 0) return `dns_failed: ${host} has no address`;
  const bad = addresses.find((a) => !isPublicAddress(a));
  return bad ? `address_not_allowed: ${host} resolves to ${bad}, ${WEBHOOK_URL_REFUSAL_TEXT.address_not_public}` : null;
}

/** Reads at most `limit` bytes of a body as text, then lets the rest go. */
async function firstBytes(res: Response, limit: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(Math.min(total, limit));
  let at = 0;
  for (const c of chunks) {
    const take = Math.min(c.byteLength, all.length - at);
    all.set(c.subarray(0, take), at);
    at += take;
    if (at >= all.length) break;
  }
  return new TextDecoder().decode(all);
}

interface SendResult {
  statusCode: number | null;
  error: string | null;
  body: string | null;
  durationMs: number;
}

async function send(
  deps: DeliveryDeps,
  endpoint: EndpointRow,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> {
  const fetchImpl = deps.fetch ?? fetch;
  const started = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("timeout")), timeoutMs);
  try {
    const res = await fetchImpl(endpoint.url, {
      method: "POST",
      body,
      // A redirect is not followed: it could lead anywhere, and the receiver's address is the endpoint's URL.
      redirect: "manual",
      signal: controller.signal,
      headers: { "Content-Type": "application/json", "User-Agent": USER_AGENT, ...headers },
    });
    const text = await firstBytes(res, RESPONSE_LOG_BYTES);
    return { statusCode: res.status, error: null, body: text, durationMs: Date.now() - started };
  } catch (err) {
    const timedOut = controller.signal.aborted;
    return {
      statusCode: null,
      error: timedOut ? `timeout: no answer within ${timeoutMs} ms` : `network_error: ${(err as Error).message}`,
      body: null,
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs attempt `msg.attempt` of a delivery. Safe under redelivery: only one consumer can claim an
 * attempt; a duplicate message of an attempt already made is dropped.
 */
export async function attemptDelivery(deps: DeliveryDeps, msg: WebhookMessage): Promise<AttemptOutcome> {
  const now = () => deps.now?.() ?? new Date();
  const config = deps.config ?? retryConfigOf(deps.env);
  const repo = webhooksRepo(deps.store.db);
  const orgId = deps.org.id;
  const startedAt = now();
  // The lease outlives the attempt's deadline, so a consumer that died mid-attempt is taken over.
  const leaseUntil = new Date(startedAt.getTime() + config.attemptTimeoutMs + 30_000).toISOString();
  if (!(await repo.claim(orgId, msg.deliveryId, msg.attempt, startedAt.toISOString(), leaseUntil))) {
    const current = await repo.delivery(orgId, msg.deliveryId);
    if (current?.status === "sending" && current.attempts === msg.attempt && current.lease_until) {
      return { kind: "busy", retryAfterSeconds: Math.max(1, Math.ceil((Date.parse(current.lease_until) - startedAt.getTime()) / 1000)) };
    }
    return { kind: "done" };
  }
  const delivery = await repo.delivery(orgId, msg.deliveryId);
  if (!delivery) return { kind: "done" };
  const endpoint = await repo.endpoint(orgId, delivery.webhook_id);
  const event = await repo.event(orgId, delivery.event_id);
  if (!endpoint || !event) {
    await repo.abandon(orgId, delivery.delivery_id, endpoint ? "event_expired" : "endpoint_deleted", startedAt.toISOString());
    return { kind: "done" };
  }
  // A disabled endpoint receives nothing more, except a test send asked for explicitly.
  if (!endpoint.enabled && delivery.trigger !== "test") {
    await repo.abandon(orgId, delivery.delivery_id, "endpoint_disabled", startedAt.toISOString());
    return { kind: "done" };
  }

  const refused = await refusal(deps.env, endpoint.url, deps.resolve ?? dohResolver(configOf(deps.env).webhooks.dnsUrl));
  let result: SendResult;
  if (refused) {
    result = { statusCode: null, error: refused, body: null, durationMs: 0 };
  } else {
    const headers = await signingHeaders(await endpointSecrets(deps.env, endpoint), event.event_id, event.body, now().getTime());
    headers["Service-Version"] = event.version;
    result = await send(deps, endpoint, headers, event.body, config.attemptTimeoutMs);
  }
  const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const finishedAt = now();
  const attempt: AttemptRow = {
    org_id: orgId,
    attempt_id: newId("wha"),
    delivery_id: delivery.delivery_id,
    webhook_id: endpoint.webhook_id,
    event_id: event.event_id,
    event_type: event.type,
    attempt: msg.attempt,
    trigger: delivery.trigger,
    started_at: startedAt.toISOString(),
    duration_ms: result.durationMs,
    status_code: result.statusCode,
    error: result.error ?? (succeeded ? null : `http_status: the endpoint answered ${result.statusCode}`),
    response_body: result.body,
    succeeded: succeeded ? 1 : 0,
  };

  if (succeeded) {
    await repo.recordAttempt(attempt, { status: "succeeded", nextAttemptAt: null, completedAt: finishedAt.toISOString() });
    await repo.markHealthy(orgId, endpoint.webhook_id);
    return { kind: "done" };
  }

  await repo.markFailing(orgId, endpoint.webhook_id, startedAt.toISOString());
  if (msg.attempt < delivery.final_attempt) {
    const due = finishedAt.getTime() + retryDelaySeconds(config, msg.attempt, deps.random?.() ?? Math.random()) * 1000;
    await repo.recordAttempt(attempt, { status: "pending", nextAttemptAt: new Date(due).toISOString(), completedAt: null });
    return { kind: "next", message: { kind: "webhook_delivery", orgId, deliveryId: delivery.delivery_id, attempt: msg.attempt + 1, due } };
  }
  await repo.recordAttempt(attempt, { status: "failed", nextAttemptAt: null, completedAt: finishedAt.toISOString() });
  if (delivery.trigger !== "test") await disableIfFailing(deps, endpoint.webhook_id, finishedAt, config);
  return { kind: "done" };
}

/**
 * A delivery ended failed: if the endpoint has failed every attempt for the threshold, disable it,
 * audit it, and, for a verification endpoint, tell the tenant's other verification endpoints that chose
 * `webhook.endpoint_disabled`. An archive endpoint's disabling is only audited (and shown on the endpoint
 * and in its delivery log): spec 6.2 sends each product's endpoints only that product's events, and the
 * archive's catalogue has no such event.
 */
async function disableIfFailing(deps: DeliveryDeps, webhookId: string, now: Date, config: RetryConfig): Promise<void> {
  const repo = webhooksRepo(deps.store.db);
  const endpoint = await repo.endpoint(deps.org.id, webhookId);
  if (
    !endpoint?.enabled ||
    !endpoint.failing_since ||
    !shouldDisable(endpoint.failing_since ? Date.parse(endpoint.failing_since) : null, now.getTime(), config)
  )
    return;
  if (!(await repo.disableFailing(deps.org.id, webhookId, now.toISOString()))) return;
  const data = {
    webhook_id: webhookId,
    product: endpoint.product,
    url: endpoint.url,
    reason: "failing" as const,
    failing_since: endpoint.failing_since,
    disabled_at: now.toISOString(),
  };
  await recordAudit(deps.store.db, { orgId: deps.org.id, actor: "system", action: "webhook.disable", target: webhookId, detail: data });
  if (endpoint.product !== "sig") return;
  await publishEvent({ env: deps.env, org: deps.org, store: deps.store, registry: deps.registry, now: deps.now }, "sig", {
    id: newId("evt"),
    type: "webhook.endpoint_disabled",
    data,
  });
}

export type { DeliveryRow };
