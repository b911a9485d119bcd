/**
 * Webhooks of both products end to end: routes, the real WEBHOOK_QUEUE consumer, and a receiver on the
 * loopback outside server that verifies every message with the `standardwebhooks` library. The test
 * configuration gives a short schedule (3 attempts at once) and disables an endpoint at its first
 * finally failed delivery (vitest.config.ts).
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { directory } from "../../src/storage/directory";
import { regionStore } from "../../src/storage/regions";
import { publishEvent } from "../../src/services/webhooks";
import { api, createOrg, operator, type CreatedOrg } from "../helpers/tenant";
import { outsideUrl, receivedWebhooks, registerReceiver, uniquePath, waitForWebhooks, type ReceivedWebhook } from "../helpers/outside";
import { until } from "../helpers/wait";

type Endpoint = {
  webhook_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string;
  product: string;
};
type Delivery = { delivery_id: string; event_id: string; event_type: string; status: string; attempts: number; trigger: string };
type Attempt = {
  attempt: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  succeeded: boolean;
  duration_ms: number;
  event_id: string;
};

const SIG = "/sig/webhooks";
const ARCHIVE = "/archive/webhooks";

async function createEndpoint(org: CreatedOrg, base: string, url: string, events: string[]): Promise<Endpoint & { secret: string }> {
  const headers: Record<string, string> = base === ARCHIVE ? { "Idempotency-Key": `k-${crypto.randomUUID()}` } : {};
  const res = await api(base, { method: "POST", key: org.apiKey, json: { url, events }, headers });
  expect(res.status, await res.clone().text()).toBe(201);
  expect(res.headers.get("Cache-Control")).toBe("no-store");
  return res.json();
}

/** A receiver at a fresh path and an endpoint pointing at it. */
async function endpointWithReceiver(org: CreatedOrg, base: string, events: string[], statuses?: number[]) {
  const path = uniquePath("hook");
  const endpoint = await createEndpoint(org, base, outsideUrl(path), events);
  await registerReceiver(path, { secrets: [endpoint.secret], statuses });
  return { path, endpoint };
}

async function deliveries(org: CreatedOrg, base: string, id: string): Promise<Delivery[]> {
  const res = await api(`${base}/${id}/deliveries`, { key: org.apiKey });
  expect(res.status).toBe(200);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

async function attempts(org: CreatedOrg, base: string, id: string): Promise<Attempt[]> {
  const res = await api(`${base}/${id}/attempts`, { key: org.apiKey });
  expect(res.status).toBe(200);
  return ((await res.json()) as { attempts: Attempt[] }).attempts;
}

async function waitForDeliveries(org: CreatedOrg, base: string, id: string, done: (d: Delivery[]) => boolean): Promise<Delivery[]> {
  return until(() => deliveries(org, base, id), done, { what: `deliveries of ${id}`, pauseMs: 100 });
}

async function publishArchive(orgId: string, type: string, data: Record<string, unknown>, id?: string) {
  const res = await operator("POST", `/platform/orgs/${orgId}/archive-events`, { type, data, ...(id ? { id } : {}) });
  expect(res.status).toBe(202);
  return (await res.json()) as { event_id: string; deliveries: number; duplicate: boolean };
}

async function tenantOf(orgId: string) {
  const org = (await directory(env.DIRECTORY).getOrg(orgId))!;
  return { env, org, store: regionStore(env, org.region) };
}

/** Publishes a verification event as the service would: a `reference.enrolled` under this id. */
async function publishEnrolled(orgId: string, id: string) {
  await publishEvent(await tenantOf(orgId), "sig", {
    id,
    type: "reference.enrolled",
    data: {
      subject_reference: "s",
      ref_id: "r",
      status: "enrolled",
      source: "unverified",
      rejected_reason: null,
      rejected_detail: null,
      at: new Date().toISOString(),
    },
  });
}

describe("verification webhook endpoints", () => {
  it("shows the secret once: on create, never on list or read", async () => {
    const org = await createOrg();
    // No Idempotency-Key on POST /sig/webhooks (spec 4.1).
    const created = await createEndpoint(org, SIG, "https://hooks.example.com/a", ["check.completed", "job.completed"]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ product: "sig", enabled: true, events: ["check.completed", "job.completed"] });
    const one = await (await api(`${SIG}/${created.webhook_id}`, { key: org.apiKey })).json();
    const list = await (await api(SIG, { key: org.apiKey })).json();
    expect(JSON.stringify(one)).not.toContain(created.secret);
    expect(JSON.stringify(list)).not.toContain(created.secret);
    expect(one).not.toHaveProperty("secret");
    expect((list as { endpoints: Endpoint[] }).endpoints.map((e) => e.webhook_id)).toEqual([created.webhook_id]);
  });

  it("lists with org:read, changes need sig:settings:manage, and pages with signed cursors", async () => {
    const org = await createOrg();
    const reader = await (await import("../helpers/tenant")).mintKey(org.orgId, ["org:read"]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createEndpoint(org, SIG, `https://hooks.example.com/${i}`, ["job.failed"])).webhook_id);
    const p1 = (await (await api(`${SIG}?limit=2`, { key: reader.apiKey })).json()) as { endpoints: Endpoint[]; next_cursor: string };
    expect(p1.endpoints.map((e) => e.webhook_id)).toEqual([ids[2], ids[1]]);
    const p2 = (await (await api(`${SIG}?limit=2&cursor=${encodeURIComponent(p1.next_cursor)}`, { key: reader.apiKey })).json()) as {
      endpoints: Endpoint[];
      next_cursor: string | null;
    };
    expect(p2.endpoints.map((e) => e.webhook_id)).toEqual([ids[0]]);
    expect(p2.next_cursor).toBeNull();
    const bad = await api(`${SIG}?cursor=forged`, { key: reader.apiKey });
    expect(bad.status).toBe(400);
    // An empty cursor is one no route issued, on every paged webhook route.
    for (const path of [SIG, `${SIG}/${ids[0]}/deliveries`, `${SIG}/${ids[0]}/attempts`, ARCHIVE]) {
      const empty = await api(`${path}?cursor=`, { key: org.apiKey });
      expect(empty.status, path).toBe(400);
      expect(((await empty.json()) as { code: string; errors: { field: string }[] }).errors[0].field).toBe("query.cursor");
    }
    const denied = await api(SIG, {
      method: "POST",
      key: reader.apiKey,
      json: { url: "https://hooks.example.com/x", events: ["job.failed"] },
    });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { detail: string }).detail).toContain("sig:settings:manage");
    expect((await api(`${SIG}/${ids[0]}`, { method: "DELETE", key: reader.apiKey })).status).toBe(403);

    const patched = await api(`${SIG}/${ids[0]}`, {
      method: "PATCH",
      key: org.apiKey,
      json: { events: ["job.completed"], enabled: false },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ events: ["job.completed"], enabled: false, disabled_reason: "manual" });
    expect((await api(`${SIG}/${ids[0]}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await api(`${SIG}/${ids[0]}`, { key: org.apiKey })).status).toBe(404);
    // Another tenant's endpoint reads as missing.
    const other = await createOrg();
    expect((await api(`${SIG}/${ids[1]}`, { key: other.apiKey })).status).toBe(404);
  });

  it("refuses loopback, private, link-local and internal URLs, and plain http, naming url", async () => {
    const org = await createOrg();
    const refused: [string, string][] = [
      ["http://hooks.example.com/x", "scheme_not_allowed"],
      ["https://127.0.0.1/x", "host_not_public"],
      ["https://localhost/x", "host_not_public"],
      ["https://api.localhost/x", "host_not_public"],
      ["https://10.1.2.3/x", "host_not_public"],
      ["https://192.168.0.10/x", "host_not_public"],
      ["https://172.20.0.1/x", "host_not_public"],
      ["https://169.254.169.254/latest/meta-data", "host_not_public"],
      ["https://0x7f.1/x", "host_not_public"],
      ["https://2130706433/x", "host_not_public"],
      ["https://[::1]/x", "host_not_public"],
      ["https://[::ffff:10.0.0.1]/x", "host_not_public"],
      ["https://[fd00::1]/x", "host_not_public"],
      ["https://metadata.google.internal/x", "host_not_public"],
      ["https://intranet/x", "host_not_public"],
      ["https://user:pw@hooks.example.com/x", "credentials_in_url"],
      ["not a url", "invalid_url"],
    ];
    for (const [url, reason] of refused) {
      const res = await api(SIG, { method: "POST", key: org.apiKey, json: { url, events: ["job.completed"] } });
      expect(res.status, url).toBe(400);
      const body = (await res.json()) as { reason: string; errors: { field: string }[] };
      expect(body.reason, url).toBe(reason);
      expect(body.errors[0].field).toBe("body.url");
    }
    // The loopback receiver is allowed only through the development setting (WEBHOOK_DEV_HOSTS: its host:port).
    const loopback = new URL(env.TEST_OUTSIDE_URL);
    expect(
      (await api(SIG, { method: "POST", key: org.apiKey, json: { url: `${loopback.origin}/ok`, events: ["job.completed"] } })).status,
    ).toBe(201);
    expect(
      (
        await api(SIG, {
          method: "POST",
          key: org.apiKey,
          json: { url: `http://127.0.0.1:${Number(loopback.port) + 1}/x`, events: ["job.completed"] },
        })
      ).status,
    ).toBe(400);
    // The same rules on a change of URL.
    const { webhook_id } = await createEndpoint(org, SIG, "https://hooks.example.com/y", ["job.completed"]);
    expect((await api(`${SIG}/${webhook_id}`, { method: "PATCH", key: org.apiKey, json: { url: "https://10.0.0.1/" } })).status).toBe(400);
  });

  it("test send: one webhook.test message, signed, verified by the receiver, logged", async () => {
    const org = await createOrg();
    const { path, endpoint } = await endpointWithReceiver(org, SIG, ["job.completed"]);
    const res = await api(`${SIG}/${endpoint.webhook_id}/test`, { method: "POST", key: org.apiKey, headers: { "Idempotency-Key": "t-1" } });
    expect(res.status).toBe(202);
    const queued = (await res.json()) as Delivery;
    expect(queued).toMatchObject({ event_type: "webhook.test", trigger: "test", status: "pending" });
    const [got] = await waitForWebhooks(path, (g) => g.length === 1);
    expect(got.verified).toEqual([true]);
    expect(got.id).toBe(queued.event_id);
    expect(got.version).toBe("2026-09-27");
    expect(got.body).toMatchObject({
      id: queued.event_id,
      type: "webhook.test",
      org_id: org.orgId,
      version: "2026-09-27",
      data: { webhook_id: endpoint.webhook_id },
    });
    const [delivered] = await waitForDeliveries(org, SIG, endpoint.webhook_id, (d) => d[0]?.status === "succeeded");
    expect(delivered).toMatchObject({ delivery_id: queued.delivery_id, attempts: 1 });
    const log = await attempts(org, SIG, endpoint.webhook_id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, status_code: 200, succeeded: true, response_body: "ok", error: null });
    // The delivery's own view has the message and its attempts.
    const detail = (await (await api(`${SIG}/${endpoint.webhook_id}/deliveries/${queued.delivery_id}`, { key: org.apiKey })).json()) as {
      payload: { type: string };
      attempt_log: Attempt[];
    };
    expect(detail.payload.type).toBe("webhook.test");
    expect(detail.attempt_log).toHaveLength(1);
  });

  it("after a rotation, signs with the new and the old secret side by side; the new one is shown once", async () => {
    const org = await createOrg();
    const path = uniquePath("rotate");
    const endpoint = await createEndpoint(org, SIG, outsideUrl(path), ["job.completed"]);
    const rotated = await api(`${SIG}/${endpoint.webhook_id}/rotate-secret`, { method: "POST", key: org.apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("Cache-Control")).toBe("no-store");
    const body = (await rotated.json()) as { secret: string; secret_version: number; previous_secret_expires_at: string };
    expect(body.secret).not.toBe(endpoint.secret);
    expect(body.secret_version).toBe(2);
    const read = await (await api(`${SIG}/${endpoint.webhook_id}`, { key: org.apiKey })).text();
    // The old secret signs for 24 h from the rotation (the endpoint's updated_at).
    const after = JSON.parse(read) as { updated_at: string; previous_secret_expires_at: string; secret_version: number };
    expect(after.previous_secret_expires_at).toBe(body.previous_secret_expires_at);
    expect(Date.parse(after.previous_secret_expires_at) - Date.parse(after.updated_at)).toBe(24 * 3600_000);
    expect(after.secret_version).toBe(2);
    expect(read).not.toContain(body.secret);
    expect(read).not.toContain(endpoint.secret);

    await registerReceiver(path, { secrets: [endpoint.secret, body.secret, "whsec_" + btoa("x".repeat(32))] });
    expect(
      (await api(`${SIG}/${endpoint.webhook_id}/test`, { method: "POST", key: org.apiKey, headers: { "Idempotency-Key": "t-2" } })).status,
    ).toBe(202);
    const [got] = await waitForWebhooks(path, (g) => g.length === 1);
    // Old and new secret both verify; an unrelated one does not.
    expect(got.verified).toEqual([true, true, false]);
    expect(got.signature.split(" ")).toHaveLength(2);
    expect(got.signature.split(" ").every((s) => s.startsWith("v1,"))).toBe(true);
  });
});

describe("Idempotency-Key on the exempt /sig/webhooks POSTs: optional, honoured when sent", () => {
  type Rotated = { webhook_id: string; secret: string; secret_version: number; previous_secret_expires_at: string };
  const rotate = (org: CreatedOrg, id: string, key?: string) =>
    api(`${SIG}/${id}/rotate-secret`, { method: "POST", key: org.apiKey, headers: key ? { "Idempotency-Key": key } : {} });

  it("rotate-secret with the same key twice rotates once and replays the new secret; without a key each call rotates", async () => {
    const org = await createOrg();
    const endpoint = await createEndpoint(org, SIG, "https://hooks.example.com/rotate-idem", ["job.completed"]);

    const first = await rotate(org, endpoint.webhook_id, "rot-1");
    expect(first.status).toBe(200);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = (await first.json()) as Rotated;
    expect(firstBody.secret_version).toBe(2);

    // The response was lost: the retry gets the same new secret, not a third one it never saw sent.
    const retry = await rotate(org, endpoint.webhook_id, "rot-1");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("Cache-Control")).toBe("no-store");
    expect(await retry.json()).toEqual(firstBody);
    const read = (await (await api(`${SIG}/${endpoint.webhook_id}`, { key: org.apiKey })).json()) as { secret_version: number };
    expect(read.secret_version).toBe(2);

    // No key: the spec exempts the route, and every call rotates.
    const plain1 = (await (await rotate(org, endpoint.webhook_id)).json()) as Rotated;
    const plain2 = await rotate(org, endpoint.webhook_id);
    expect(plain2.status).toBe(200);
    expect(plain2.headers.get("Idempotent-Replayed")).toBeNull();
    const plain2Body = (await plain2.json()) as Rotated;
    expect([plain1.secret_version, plain2Body.secret_version]).toEqual([3, 4]);
    expect(plain2Body.secret).not.toBe(plain1.secret);

    // A malformed key is refused rather than ignored.
    const bad = await rotate(org, endpoint.webhook_id, "has space");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { field: string }[] }).errors[0].field).toBe("Idempotency-Key");
  });

  it("create with a key: a retry replays the endpoint and its secret instead of creating a second endpoint", async () => {
    const org = await createOrg();
    const init = (key: string, url: string) => ({
      method: "POST",
      key: org.apiKey,
      json: { url, events: ["job.completed"] },
      headers: { "Idempotency-Key": key },
    });
    const first = await api(SIG, init("cre-1", "https://hooks.example.com/c1"));
    expect(first.status).toBe(201);
    const created = (await first.json()) as Endpoint;
    const retry = await api(SIG, init("cre-1", "https://hooks.example.com/c1"));
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await retry.json()).toEqual(created);
    const conflict = await api(SIG, init("cre-1", "https://hooks.example.com/other"));
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { code: string }).code).toBe("idempotency_conflict");
    const list = (await (await api(SIG, { key: org.apiKey })).json()) as { endpoints: Endpoint[] };
    expect(list.endpoints.map((e) => e.webhook_id)).toEqual([created.webhook_id]);
  });
});

describe("delivery: retries, the log, failure and disabling", () => {
  it("a receiver failing twice then succeeding gets the message three times with the same id; the log shows all three", async () => {
    const org = await createOrg();
    const { path, endpoint } = await endpointWithReceiver(org, ARCHIVE, ["archive.record.filed"], [500, 503, 200]);
    const published = await publishArchive(
      org.orgId,
      "archive.record.filed",
      { record_id: "rec-1", filed_at: "2026-11-01T10:00:00Z" },
      "filed-1",
    );
    expect(published).toMatchObject({ deliveries: 1, duplicate: false });
    const got = await waitForWebhooks(path, (g) => g.length === 3);
    expect(got.map((g) => g.status)).toEqual([500, 503, 200]);
    expect(new Set(got.map((g) => g.id))).toEqual(new Set([published.event_id]));
    expect(got.every((g) => g.verified[0])).toBe(true);
    expect(new Set(got.map((g) => JSON.stringify(g.body))).size).toBe(1);
    expect(got[0].body).toMatchObject({ type: "archive.record.filed", data: { record_id: "rec-1" } });

    const [delivery] = await waitForDeliveries(org, ARCHIVE, endpoint.webhook_id, (d) => d[0]?.status === "succeeded");
    expect(delivery).toMatchObject({ attempts: 3, event_id: published.event_id });
    const log = (await attempts(org, ARCHIVE, endpoint.webhook_id)).sort((a, b) => a.attempt - b.attempt);
    expect(log.map((a) => [a.attempt, a.status_code, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 503, false],
      [3, 200, true],
    ]);
    expect(log[0].response_body).toBe("failing with 500");
    expect(log[0].error).toMatch(/^http_status/);
    expect(log.every((a) => a.event_id === published.event_id && a.duration_ms >= 0)).toBe(true);
    // The archive product publishing the same id again sends nothing more.
    expect(await publishArchive(org.orgId, "archive.record.filed", { record_id: "rec-1" }, "filed-1")).toMatchObject({
      event_id: published.event_id,
      deliveries: 0,
      duplicate: true,
    });
    expect((await receivedWebhooks(path)).length).toBe(3);
  });

  it("a receiver that never succeeds: the delivery ends failed, the endpoint is disabled and audited; only a verification endpoint's disabling is announced", async () => {
    const org = await createOrg();
    const watcher = await endpointWithReceiver(org, SIG, ["webhook.endpoint_disabled"]);
    const { path, endpoint } = await endpointWithReceiver(org, ARCHIVE, ["archive.export.ready"], [500]);
    await publishArchive(org.orgId, "archive.export.ready", { record_id: "r", export_id: "e-1" });
    const got = await waitForWebhooks(path, (g) => g.length === 3);
    expect(got.map((g) => g.status)).toEqual([500, 500, 500]);
    const [delivery] = await waitForDeliveries(org, ARCHIVE, endpoint.webhook_id, (d) => d[0]?.status === "failed");
    expect(delivery.attempts).toBe(3);

    const auditEntries = async () =>
      ((await (await api("/platform/audit", { key: org.apiKey })).json()) as { entries: { action: string; target: string }[] }).entries;
    const audit = await until(auditEntries, (e) => e.some((x) => x.action === "webhook.disable" && x.target === endpoint.webhook_id), {
      what: "the archive endpoint's webhook.disable",
      pauseMs: 100,
    });
    expect(audit.some((e) => e.action === "webhook.disable" && e.target === endpoint.webhook_id)).toBe(true);
    const list = (await (await api(ARCHIVE, { key: org.apiKey })).json()) as { endpoints: Endpoint[] };
    expect(list.endpoints[0]).toMatchObject({ webhook_id: endpoint.webhook_id, enabled: false, disabled_reason: "failing" });

    // Spec 6.2: each endpoint receives only its own product's events, and the archive's catalogue has no
    // endpoint_disabled. A verification endpoint failing afterwards is announced, and is the only notice.
    const failing = await endpointWithReceiver(org, SIG, ["reference.enrolled"], [500]);
    await publishEnrolled(org.orgId, `evt_fail_${crypto.randomUUID()}`);
    const [notice] = await waitForWebhooks(watcher.path, (g) => g.length === 1);
    expect(notice.verified).toEqual([true]);
    expect(notice.body).toMatchObject({
      type: "webhook.endpoint_disabled",
      data: { webhook_id: failing.endpoint.webhook_id, product: "sig", reason: "failing" },
    });
    // The archive endpoint's disabling, which happened first, was never queued for the watcher.
    expect((await deliveries(org, SIG, watcher.endpoint.webhook_id)).map((d) => d.event_type)).toEqual(["webhook.endpoint_disabled"]);
    expect((await receivedWebhooks(watcher.path)).length).toBe(1);
    // A disabled endpoint gets nothing more, and its failed delivery cannot be redelivered until enabled.
    expect(await publishArchive(org.orgId, "archive.export.ready", { record_id: "r", export_id: "e-2" })).toMatchObject({ deliveries: 0 });
    const redeliver = await api(`${ARCHIVE}/${endpoint.webhook_id}/deliveries/${delivery.delivery_id}/redeliver`, {
      method: "POST",
      key: org.apiKey,
      headers: { "Idempotency-Key": "r-1" },
    });
    expect(redeliver.status).toBe(409);
    expect((await receivedWebhooks(path)).length).toBe(3);
  });

  it("redelivers a finished delivery once more, with the same message id (spec 4.1: no Idempotency-Key needed under /sig/webhooks)", async () => {
    const org = await createOrg();
    const { path, endpoint } = await endpointWithReceiver(org, SIG, ["job.completed"]);
    const res = await api(`${SIG}/${endpoint.webhook_id}/test`, { method: "POST", key: org.apiKey });
    expect(res.status).toBe(202);
    const queued = (await res.json()) as Delivery;
    await waitForDeliveries(org, SIG, endpoint.webhook_id, (d) => d[0]?.status === "succeeded");
    const again = await api(`${SIG}/${endpoint.webhook_id}/deliveries/${queued.delivery_id}/redeliver`, {
      method: "POST",
      key: org.apiKey,
    });
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ delivery_id: queued.delivery_id, trigger: "manual", status: "pending" });
    const got = await waitForWebhooks(path, (g) => g.length === 2);
    expect(got[1].id).toBe(got[0].id);
    const [done] = await waitForDeliveries(org, SIG, endpoint.webhook_id, (d) => d[0]?.status === "succeeded" && d[0].attempts === 2);
    expect(done.trigger).toBe("manual");

    // The archive's routes are not exempt: its test send without a key is refused, and nothing is sent.
    const archive = await endpointWithReceiver(org, ARCHIVE, ["archive.export.ready"]);
    const refused = await api(`${ARCHIVE}/${archive.endpoint.webhook_id}/test`, { method: "POST", key: org.apiKey });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "invalid_request" });
    expect(await deliveries(org, ARCHIVE, archive.endpoint.webhook_id)).toEqual([]);
  });
});

describe("products are kept apart", () => {
  it("archive endpoints never receive verification events, and verification endpoints never archive events", async () => {
    const org = await createOrg();
    const sigAll = [
      "check.completed",
      "job.completed",
      "job.failed",
      "reference.enrolled",
      "reference.rejected",
      "webhook.endpoint_disabled",
    ];
    const archiveAll = [
      "archive.record.filed",
      "archive.hold.applied",
      "archive.hold.released",
      "archive.record.disposed",
      "archive.integrity.alert",
      "archive.export.ready",
      "archive.restore.ready",
    ];
    // Choosing another product's events is refused.
    const wrong = await api(SIG, {
      method: "POST",
      key: org.apiKey,
      json: { url: "https://hooks.example.com/s", events: ["archive.record.filed"] },
    });
    expect(wrong.status).toBe(400);
    const wrong2 = await api(ARCHIVE, {
      method: "POST",
      key: org.apiKey,
      json: { url: "https://hooks.example.com/a", events: ["check.completed"] },
      headers: { "Idempotency-Key": "w-1" },
    });
    expect(wrong2.status).toBe(400);

    const sig = await endpointWithReceiver(org, SIG, sigAll);
    const archive = await endpointWithReceiver(org, ARCHIVE, archiveAll);
    // Each product's routes see only its own endpoints.
    expect((await api(`${ARCHIVE}/${sig.endpoint.webhook_id}`, { key: org.apiKey })).status).toBe(404);
    expect((await api(`${SIG}/${archive.endpoint.webhook_id}`, { key: org.apiKey })).status).toBe(404);

    for (const type of archiveAll) await publishArchive(org.orgId, type, { record_id: `r-${type}` });
    await publishEnrolled(org.orgId, "evt_sig_1");
    const arch = await waitForWebhooks(archive.path, (g) => g.length === 7);
    const sigGot = await waitForWebhooks(sig.path, (g) => g.length === 1);
    await waitForDeliveries(org, ARCHIVE, archive.endpoint.webhook_id, (d) => d.length === 7 && d.every((x) => x.status === "succeeded"));
    expect(arch.map((g) => g.body!.type).sort()).toEqual([...archiveAll].sort());
    expect(sigGot.map((g) => g.body!.type)).toEqual(["reference.enrolled"]);
    expect((await receivedWebhooks(sig.path)).length).toBe(1);
    expect((await receivedWebhooks(archive.path)).every((g) => g.body!.type.startsWith("archive."))).toBe(true);
  });

  it("archive routes: org:read lists, archive:webhooks:manage changes; create needs an Idempotency-Key", async () => {
    const org = await createOrg({ permissions: ["org:read", "sig:settings:manage"] });
    const denied = await api(ARCHIVE, {
      method: "POST",
      key: org.apiKey,
      json: { url: "https://hooks.example.com/a", events: ["archive.record.filed"] },
      headers: { "Idempotency-Key": "a-1" },
    });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { detail: string }).detail).toContain("archive:webhooks:manage");
    expect((await api(ARCHIVE, { key: org.apiKey })).status).toBe(200);
    const full = await createOrg();
    const missingKey = await api(ARCHIVE, {
      method: "POST",
      key: full.apiKey,
      json: { url: "https://hooks.example.com/a", events: ["archive.record.filed"] },
    });
    expect(missingKey.status).toBe(400);

    // The archive's test send and delivery log.
    const { path, endpoint } = await endpointWithReceiver(full, ARCHIVE, ["archive.restore.ready"]);
    const sent = await api(`${ARCHIVE}/${endpoint.webhook_id}/test`, {
      method: "POST",
      key: full.apiKey,
      headers: { "Idempotency-Key": "at-1" },
    });
    expect(sent.status).toBe(202);
    const [got] = await waitForWebhooks(path, (g) => g.length === 1);
    expect(got.verified).toEqual([true]);
    expect(got.body).toMatchObject({ type: "webhook.test", data: { webhook_id: endpoint.webhook_id } });
    await waitForDeliveries(full, ARCHIVE, endpoint.webhook_id, (d) => d[0]?.status === "succeeded");
    expect((await attempts(full, ARCHIVE, endpoint.webhook_id)).map((a) => a.status_code)).toEqual([200]);
    expect((await api(`${ARCHIVE}/${endpoint.webhook_id}`, { method: "DELETE", key: full.apiKey })).status).toBe(204);
    expect((await api(`${ARCHIVE}/${endpoint.webhook_id}/attempts`, { key: full.apiKey })).status).toBe(404);
  });
});

describe("a queued check job", () => {
  it("produces check.completed per item and one job.completed, each exactly once per endpoint even when messages are redelivered", async () => {
    const { enrolWriter, checkForm, postCheck, waitForJob } = await import("../helpers/checks");
    const { signaturePng } = await import("../helpers/signatures");
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", 11, 3);
    const a = await endpointWithReceiver(org, SIG, ["check.completed", "job.completed"]);
    const b = await endpointWithReceiver(org, SIG, ["job.completed"]);
    const form = checkForm(
      {
        job_id: "hooked-1",
        items: [
          { file: "x", subject_reference: "alice" },
          { file: "y", subject_reference: "alice" },
          { file: "x", subject_reference: "nobody" },
        ],
      },
      { x: signaturePng(11, 5), y: signaturePng(57, 1) },
    );
    expect((await postCheck(org.apiKey, form)).status).toBe(202);
    await waitForJob(org.apiKey, "hooked-1");
    const isDone = (g: ReceivedWebhook[]) => g.length === 4;
    await waitForWebhooks(a.path, isDone);
    await waitForWebhooks(b.path, (g) => g.length === 1);
    await waitForDeliveries(org, SIG, a.endpoint.webhook_id, (d) => d.length === 4 && d.every((x) => x.status === "succeeded"));

    // Every check message delivered again, twice, concurrently; and a duplicate of a webhook message.
    const messages = [0, 1, 2, 0, 1, 2].map((index, n) => ({
      id: `again-${n}`,
      timestamp: new Date(),
      attempts: 2,
      body: { kind: "check_item", orgId: org.orgId, jobId: "hooked-1", index },
    }));
    await Promise.all(
      [1, 2].map(() => worker.queue(createMessageBatch("countersign-check-items", messages), env, createExecutionContext())),
    );
    const [first] = await deliveries(org, SIG, a.endpoint.webhook_id);
    const dup = createMessageBatch("countersign-webhook-deliveries", [
      {
        id: "dup-1",
        timestamp: new Date(),
        attempts: 1,
        body: { kind: "webhook_delivery", orgId: org.orgId, deliveryId: first.delivery_id, attempt: 1, due: Date.now() },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(dup, env, ctx);
    expect((await getQueueResult(dup, ctx)).explicitAcks).toEqual(["dup-1"]);

    const all = await deliveries(org, SIG, a.endpoint.webhook_id);
    expect(all).toHaveLength(4);
    expect(all.every((d) => d.attempts === 1 && d.status === "succeeded")).toBe(true);
    const got = await receivedWebhooks(a.path);
    expect(got).toHaveLength(4);
    const types = got.map((g) => g.body!.type).sort();
    expect(types).toEqual(["check.completed", "check.completed", "check.completed", "job.completed"]);
    expect(new Set(got.map((g) => g.id)).size).toBe(4);
    const items = got
      .filter((g) => g.body!.type === "check.completed")
      .map((g) => (g.body!.data as { check_id: string }).check_id)
      .sort();
    expect(items).toEqual(["hooked-1/0", "hooked-1/1", "hooked-1/2"]);
    const job = got.find((g) => g.body!.type === "job.completed")!;
    expect(job.body!.data).toMatchObject({ job_id: "hooked-1", status: "completed", item_count: 3, completed_items: 3, errored_items: 1 });
    expect(got.every((g) => g.verified[0])).toBe(true);
    const onlyJob = await receivedWebhooks(b.path);
    expect(onlyJob.map((g) => [g.body!.type, g.id])).toEqual([["job.completed", job.id]]);
  });
});
