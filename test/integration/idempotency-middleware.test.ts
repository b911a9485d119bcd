import { Hono } from "hono";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "../../durable-objects/tenant-gate";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { bodyLimits } from "../../src/http/body";
import type { AppEnv } from "../../src/http/context";
import type { Caller, Tenant } from "../../src/domain/tenancy";
import { idempotency, idempotencyOf } from "../../src/http/idempotency";
import { ProblemError, isProblemError, renderProblem } from "../../src/http/problem";
import { requestId } from "../../src/http/request-id";
import { resolveRules } from "../../src/http/route";
import { versioning } from "../../src/http/versioning";

/**
 * The real idempotency middleware against the real TenantGate DO, mounted on a small app: no product
 * POST route exists yet, and the middleware is the same one every POST route gets from defineRoute.
 * The tenant stands in for authentication (tested elsewhere).
 */
let orgCounter = 0;
function testApp() {
  const org = { id: `org_idem_${++orgCounter}_${Date.now()}`, region: "us" as const, pinnedVersion: "2026-09-27" };
  const runs: Record<string, number> = {};
  const gates: Record<string, () => void> = {};
  // Resolves when a request is parked in the slow handler: tests wait on that event, not on a clock.
  let parked!: () => void;
  const slowEntered = new Promise<void>((resolve) => (parked = resolve));
  const app = new Hono<AppEnv>();
  app.use("*", requestId());
  app.use("*", versioning());
  app.use("*", bodyLimits());
  app.use("*", async (c, next) => {
    c.set("tenant", { org, store: undefined, actingAs: false } as unknown as Tenant);
    c.set("caller", { kind: (c.req.header("X-Test-Kind") ?? "api_key") as Caller["kind"] } as Caller);
    await next();
  });
  app.use("/idem/*", idempotency(resolveRules("post", { permission: "sig:checks:create" })));
  app.use("/opt/*", idempotency(resolveRules("post", { permission: "sig:checks:create", idempotency: "optional" })));

  const count = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);
  app.post("/idem/create", async (c) => {
    const body = await c.req.json<{ n: number }>();
    const run = count("create");
    c.header("Location", `/things/${run}`);
    return c.json({ run, n: body.n }, 201);
  });
  app.post("/idem/fail-once", async () => {
    if (count("fail-once") === 1) throw new ProblemError("unprocessable", "first attempt fails");
    return new Response(JSON.stringify({ ok: true }), { status: 200, headers: { "Content-Type": "application/json" } });
  });
  app.post("/idem/crash-once", async () => {
    if (count("crash-once") === 1) throw new Error("boom");
    return new Response("{}", { status: 200 });
  });
  app.post("/idem/slow", async (c) => {
    count("slow");
    await new Promise<void>((resolve) => {
      gates.slow = resolve;
      parked();
    });
    return c.json({ done: true }, 200);
  });
  app.post("/idem/busy", async (c) => {
    count("busy");
    idempotencyOf(c)!.commitOutcome();
    throw new ProblemError("busy", "no capacity", { extensions: { job_id: "chk_busy", status_url: "https://x/sig/checks/chk_busy" } });
  });
  app.post("/idem/stream", async (c) => {
    count("stream");
    await idempotencyOf(c)!.markNotReplayable("chk_stream");
    return new Response("event: received\ndata: {}\n\n", { headers: { "Content-Type": "text/event-stream" } });
  });
  app.post("/opt/create", async (c) => {
    const run = count("opt");
    return c.json({ run, keyed: idempotencyOf(c) !== undefined }, 201);
  });
  app.post("/idem/multipart", async (c) => {
    const form = await c.req.formData();
    count("multipart");
    return c.json({ size: (form.get("file") as unknown as File).size }, 201);
  });
  app.onError((err, c) =>
    renderProblem(isProblemError(err) ? err : new ProblemError("internal_error", "x"), env.DOCS_URL, c.get("requestId")),
  );

  const post = (path: string, init: { key?: string; body?: BodyInit; json?: unknown; headers?: Record<string, string> } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key !== undefined) headers.set("Idempotency-Key", init.key);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set("Content-Type", "application/json");
      body = JSON.stringify(init.json);
    }
    return app.request(path, { method: "POST", headers, body }, env);
  };
  return { post, runs, gates, slowEntered, org };
}

type Problem = { code: string; detail: string; errors?: { field: string }[]; job_id?: string; status_url?: string };

describe("Idempotency-Key", () => {
  it("replays the original response for the same key and body", async () => {
    const { post, runs } = testApp();
    const first = await post("/idem/create", { key: "k-1", json: { n: 1 } });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.json();

    const again = await post("/idem/create", { key: "k-1", json: { n: 1 } });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Location")).toBe("/things/1");
    expect(again.headers.get("Content-Type")).toContain("application/json");
    expect(await again.json()).toEqual(firstBody);
    // The replay carries this request's own id and the version headers.
    expect(again.headers.get("X-Request-Id")).not.toBe(first.headers.get("X-Request-Id"));
    expect(again.headers.get("Service-Version")).toBe("2026-09-27");
    expect(runs.create).toBe(1);
  });

  it("answers 409 idempotency_conflict for the same key with a different body", async () => {
    const { post, runs } = testApp();
    await post("/idem/create", { key: "k-2", json: { n: 1 } });
    const res = await post("/idem/create", { key: "k-2", json: { n: 2 } });
    expect(res.status).toBe(409);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(((await res.json()) as Problem).code).toBe("idempotency_conflict");
    expect(runs.create).toBe(1);
  });

  it("answers 409 idempotency_in_progress while the first request runs", async () => {
    const { post, runs, gates, slowEntered } = testApp();
    const first = post("/idem/slow", { key: "k-3", json: {} });
    await slowEntered;
    const second = await post("/idem/slow", { key: "k-3", json: {} });
    expect(second.status).toBe(409);
    expect(((await second.json()) as Problem).code).toBe("idempotency_in_progress");
    gates.slow();
    expect((await first).status).toBe(200);
    const third = await post("/idem/slow", { key: "k-3", json: {} });
    expect(third.headers.get("Idempotent-Replayed")).toBe("true");
    expect(runs.slow).toBe(1);
  });

  it("answers 409 idempotency_conflict for a different body while the first request runs", async () => {
    const { post, runs, gates, slowEntered } = testApp();
    const first = post("/idem/slow", { key: "k-3b", json: { n: 1 } });
    await slowEntered;
    // A mismatched body can never succeed under this key, so it is not told to retry (no Retry-After).
    const different = await post("/idem/slow", { key: "k-3b", json: { n: 2 } });
    expect(different.status).toBe(409);
    expect(((await different.json()) as Problem).code).toBe("idempotency_conflict");
    expect(different.headers.get("Retry-After")).toBeNull();
    const same = await post("/idem/slow", { key: "k-3b", json: { n: 1 } });
    expect(same.status).toBe(409);
    expect(((await same.json()) as Problem).code).toBe("idempotency_in_progress");
    expect(same.headers.get("Retry-After")).toBe("1");
    gates.slow();
    expect((await first).status).toBe(200);
    expect(runs.slow).toBe(1);
  });

  it("two concurrent requests with one key: one runs, the other is told it is in progress", async () => {
    const { post, runs, gates, slowEntered } = testApp();
    const requests = [post("/idem/slow", { key: "k-race", json: {} }), post("/idem/slow", { key: "k-race", json: {} })];
    await slowEntered;
    // One of them is parked in the handler, so the first to answer is the other; release the parked one after it.
    const firstAnswer = await Promise.race(requests);
    expect(firstAnswer.status).toBe(409);
    gates.slow();
    const statuses = (await Promise.all(requests)).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    expect(runs.slow).toBe(1);
  });

  it("releases the key after an error, so a retry runs again", async () => {
    const { post, runs } = testApp();
    const first = await post("/idem/fail-once", { key: "k-4", json: {} });
    expect(first.status).toBe(422);
    const retry = await post("/idem/fail-once", { key: "k-4", json: {} });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
    expect(runs["fail-once"]).toBe(2);
    // After success the key is kept.
    expect((await post("/idem/fail-once", { key: "k-4", json: {} })).headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("releases the key after a crash (500)", async () => {
    const { post, runs } = testApp();
    expect((await post("/idem/crash-once", { key: "k-5", json: {} })).status).toBe(500);
    expect((await post("/idem/crash-once", { key: "k-5", json: {} })).status).toBe(200);
    expect(runs["crash-once"]).toBe(2);
  });

  it("a key whose request died without releasing it is free again after the lease", async () => {
    const { post, runs, org } = testApp();
    const gate = tenantGate(env, org);
    const begun = await gate.begin("k-dead", `POST /idem/create ${"x"}`, "POST /idem/create");
    expect(begun.kind).toBe("new");
    expect((await post("/idem/create", { key: "k-dead", json: { n: 1 } })).status).toBe(409);
    await runInDurableObject(gate, (_i, state) => {
      state.storage.sql.exec("UPDATE idempotency SET updated_at = updated_at - ?", IDEMPOTENCY_LEASE_MS);
    });
    expect((await post("/idem/create", { key: "k-dead", json: { n: 1 } })).status).toBe(201);
    expect(runs.create).toBe(1);
  });

  it("forgets keys after 24 hours", async () => {
    const { post, runs, org } = testApp();
    await post("/idem/create", { key: "k-6", json: { n: 1 } });
    const gate = tenantGate(env, org);
    await runInDurableObject(gate, (_i, state) => {
      state.storage.sql.exec("UPDATE idempotency SET created_at = created_at - ?", IDEMPOTENCY_TTL_MS - 60_000);
    });
    expect((await post("/idem/create", { key: "k-6", json: { n: 1 } })).headers.get("Idempotent-Replayed")).toBe("true");
    await runInDurableObject(gate, (_i, state) => {
      state.storage.sql.exec("UPDATE idempotency SET created_at = created_at - ?", 60_000);
    });
    expect(await runDurableObjectAlarm(gate)).toBe(true);
    const count = await runInDurableObject(gate, (_i, state) => state.storage.sql.exec("SELECT COUNT(*) AS n FROM idempotency").one().n);
    expect(count).toBe(0);
    const fresh = await post("/idem/create", { key: "k-6", json: { n: 2 } });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get("Idempotent-Replayed")).toBeNull();
    expect(runs.create).toBe(2);
  });

  it("replays a committed outcome of a check (503 busy with job_id)", async () => {
    const { post, runs } = testApp();
    const first = await post("/idem/busy", { key: "k-7", json: {} });
    expect(first.status).toBe(503);
    const again = await post("/idem/busy", { key: "k-7", json: {} });
    expect(again.status).toBe(503);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(((await again.json()) as Problem).job_id).toBe("chk_busy");
    expect(runs.busy).toBe(1);
  });

  it("answers 409 idempotency_not_replayable for a streamed check's key, pointing at the job", async () => {
    const { post } = testApp();
    const first = await post("/idem/stream", { key: "k-8", json: {} });
    expect(await first.text()).toContain("event: received");
    const again = await post("/idem/stream", { key: "k-8", json: {} });
    expect(again.status).toBe(409);
    const body = (await again.json()) as Problem;
    expect(body.code).toBe("idempotency_not_replayable");
    expect(body.detail).toContain("GET /sig/checks/chk_stream");
    expect(body.job_id).toBe("chk_stream");
  });

  it("fingerprints multipart bodies by their parts, not the boundary", async () => {
    const { post, runs } = testApp();
    const form = () => {
      const f = new FormData();
      f.set("request", JSON.stringify({ items: [{ file: "file" }] }));
      f.set("file", new File([new Uint8Array(3000).fill(7)], "doc.png", { type: "image/png" }));
      return f;
    };
    const first = await post("/idem/multipart", { key: "k-9", body: form() });
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ size: 3000 });
    const again = await post("/idem/multipart", { key: "k-9", body: form() });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    const different = form();
    different.set("file", new File([new Uint8Array(3000).fill(8)], "doc.png", { type: "image/png" }));
    expect((await post("/idem/multipart", { key: "k-9", body: different })).status).toBe(409);
    expect(runs.multipart).toBe(1);
  });

  it("requires the key (400 naming the header) and checks its form", async () => {
    const { post, runs } = testApp();
    const missing = await post("/idem/create", { json: { n: 1 } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Problem).errors?.[0].field).toBe("Idempotency-Key");
    for (const bad of ["", "x".repeat(256), "has space", "tab\tkey", "del\x7fkey"]) {
      const res = await post("/idem/create", { key: bad, json: { n: 1 } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      const body = (await res.json()) as Problem;
      expect(body.errors?.[0].field).toBe("Idempotency-Key");
    }
    for (const good of ["a", "x".repeat(255), "!~#$%&'*+-.^_`|0123"]) {
      expect((await post("/idem/create", { key: good, json: { n: 1 } })).status, good).toBe(201);
    }
    expect(runs.create).toBe(3);
  });

  it("an optional key: without one every request runs; one sent is honoured like a required one", async () => {
    const { post, runs } = testApp();
    expect(await (await post("/opt/create", { json: {} })).json()).toEqual({ run: 1, keyed: false });
    expect(await (await post("/opt/create", { json: {} })).json()).toEqual({ run: 2, keyed: false });
    const keyed = await post("/opt/create", { key: "o-1", json: {} });
    expect(await keyed.json()).toEqual({ run: 3, keyed: true });
    const again = await post("/opt/create", { key: "o-1", json: {} });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual({ run: 3, keyed: true });
    expect(((await (await post("/opt/create", { key: "o-1", json: { x: 1 } })).json()) as Problem).code).toBe("idempotency_conflict");
    expect((await post("/opt/create", { key: "bad key", json: {} })).status).toBe(400);
    expect(runs.opt).toBe(3);
  });

  it("session tokens send no key", async () => {
    const { post } = testApp();
    const res = await post("/idem/create", { json: { n: 1 }, headers: { "X-Test-Kind": "session" } });
    expect(res.status).toBe(201);
  });
});
