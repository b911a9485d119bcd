import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  utcMonth,
  type StoredResponse,
  type TenantGate,
} from "../../durable-objects/tenant-gate";
import { moveTenantGate, tenantGate } from "../../durable-objects/tenant-gate-client";

let n = 0;
function freshGate(): DurableObjectStub<TenantGate> {
  return tenantGate(env, { id: `org_gate_${++n}_${Date.now()}`, region: "us" });
}

function response(body: string, status = 201): StoredResponse {
  return {
    status,
    headers: [
      ["content-type", "application/json"],
      ["location", "/x/1"],
    ],
    body: new TextEncoder().encode(body).buffer as ArrayBuffer,
  };
}

/** Moves every stored time of a gate back, as if `ms` had passed. */
async function age(stub: DurableObjectStub<TenantGate>, ms: number): Promise<void> {
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE idempotency SET created_at = created_at - ?, updated_at = updated_at - ?", ms, ms);
    state.storage.sql.exec("UPDATE buckets SET updated_at = updated_at - ?", ms);
  });
}

/**
 * Takes tokens synchronously inside the object: the clock does not move during synchronous code in
 * workerd, so the counts are exact.
 */
async function drain(stub: DurableObjectStub<TenantGate>, bucket: "api" | "image", opts: { elapsedMs?: number } = {}) {
  return runInDurableObject(stub, (instance, state) => {
    const gate = instance as TenantGate;
    // Exactly `elapsedMs` since the bucket was last touched, measured on the frozen clock.
    if (opts.elapsedMs !== undefined)
      state.storage.sql.exec("UPDATE buckets SET updated_at = ? WHERE name = ?", Date.now() - opts.elapsedMs, bucket);
    let granted = 0;
    for (let i = 0; i < 1000; i++) {
      const r = gate.take(bucket);
      if (!r.ok) return { granted, retryAfterSeconds: r.retryAfterSeconds };
      granted++;
    }
    return { granted, retryAfterSeconds: 0 };
  });
}

describe("TenantGate rate buckets", () => {
  it("allows the burst of 50 API requests, then refuses with Retry-After 1", async () => {
    const gate = freshGate();
    expect(await drain(gate, "api")).toEqual({ granted: 50, retryAfterSeconds: 1 });
  });

  it("refills at 20 tokens per second up to the burst", async () => {
    const gate = freshGate();
    await drain(gate, "api");
    expect((await drain(gate, "api", { elapsedMs: 500 })).granted).toBe(10); // half a second: 10 tokens
    expect((await drain(gate, "api", { elapsedMs: 3_600_000 })).granted).toBe(50); // an hour: capped at the burst
  });

  it("keeps the image bucket apart, with 50/s and a burst of 200", async () => {
    const gate = freshGate();
    await drain(gate, "api");
    expect(await drain(gate, "image")).toEqual({ granted: 200, retryAfterSeconds: 1 });
    expect((await drain(gate, "image", { elapsedMs: 100 })).granted).toBe(5);
  });

  it("answers over RPC with ok or the seconds to wait", async () => {
    const gate = freshGate();
    expect(await gate.take("api")).toMatchObject({ ok: true });
    await drain(gate, "api");
    await age(gate, -10_000); // hold the refill back, however slow this machine is
    expect(await gate.take("api")).toEqual({ ok: false, retryAfterSeconds: 1 });
  });
});

describe("TenantGate idempotency records", () => {
  it("answers new, then in_progress while running, then replays the stored response", async () => {
    const gate = freshGate();
    const first = await gate.begin("k1", "fp-a", "POST /x");
    expect(first.kind).toBe("new");
    expect((await gate.begin("k1", "fp-a", "POST /x")).kind).toBe("in_progress");
    if (first.kind !== "new") throw new Error("unreachable");
    expect(await gate.complete("k1", first.lease, response('{"id":1}'))).toBe(true);
    const again = await gate.begin("k1", "fp-a", "POST /x");
    expect(again.kind).toBe("replay");
    if (again.kind !== "replay") throw new Error("unreachable");
    expect(again.response.status).toBe(201);
    expect(again.response.headers).toContainEqual(["location", "/x/1"]);
    expect(new TextDecoder().decode(again.response.body)).toBe('{"id":1}');
  });

  it("answers conflict for the same key with a different fingerprint", async () => {
    const gate = freshGate();
    const first = await gate.begin("k", "fp-a", "POST /x");
    if (first.kind !== "new") throw new Error("expected new");
    await gate.complete("k", first.lease, response("{}"));
    expect((await gate.begin("k", "fp-b", "POST /x")).kind).toBe("conflict");
  });

  it("answers conflict for a different fingerprint while the first request still runs", async () => {
    const gate = freshGate();
    expect((await gate.begin("k", "fp-a", "POST /x")).kind).toBe("new");
    expect((await gate.begin("k", "fp-b", "POST /x")).kind).toBe("conflict");
    expect((await gate.begin("k", "fp-a", "POST /x")).kind).toBe("in_progress");
  });

  it("frees a released key for a new attempt, and refuses a stale lease", async () => {
    const gate = freshGate();
    const first = await gate.begin("k", "fp-a", "POST /x");
    if (first.kind !== "new") throw new Error("expected new");
    expect(await gate.release("k", first.lease)).toBe(true);
    const second = await gate.begin("k", "fp-b", "POST /x");
    expect(second.kind).toBe("new");
    // The first attempt's lease no longer owns the key.
    expect(await gate.complete("k", first.lease, response("{}"))).toBe(false);
    expect((await gate.begin("k", "fp-b", "POST /x")).kind).toBe("in_progress");
  });

  it("treats an in-progress record older than the lease as abandoned", async () => {
    const gate = freshGate();
    const first = await gate.begin("k", "fp-a", "POST /x");
    if (first.kind !== "new") throw new Error("expected new");
    await age(gate, IDEMPOTENCY_LEASE_MS + 1);
    const second = await gate.begin("k", "fp-a", "POST /x");
    expect(second.kind).toBe("new");
    expect(await gate.complete("k", first.lease, response("{}"))).toBe(false);
  });

  it("two concurrent begins with one key: exactly one is new", async () => {
    const gate = freshGate();
    const results = await Promise.all([gate.begin("race", "fp", "POST /x"), gate.begin("race", "fp", "POST /x")]);
    expect(results.map((r) => r.kind).sort()).toEqual(["in_progress", "new"]);
  });

  it("answers not_replayable with the job id after markNotReplayable", async () => {
    const gate = freshGate();
    const first = await gate.begin("s", "fp", "POST /sig/checks");
    if (first.kind !== "new") throw new Error("expected new");
    expect(await gate.markNotReplayable("s", first.lease, "chk_1")).toBe(true);
    expect(await gate.begin("s", "fp", "POST /sig/checks")).toEqual({ kind: "not_replayable", jobId: "chk_1" });
  });

  it("forgets a key after 24 hours on read", async () => {
    const gate = freshGate();
    const first = await gate.begin("old", "fp-a", "POST /x");
    if (first.kind !== "new") throw new Error("expected new");
    await gate.complete("old", first.lease, response("{}"));
    await age(gate, IDEMPOTENCY_TTL_MS - 60_000);
    expect((await gate.begin("old", "fp-b", "POST /x")).kind).toBe("conflict");
    await age(gate, 60_000);
    expect((await gate.begin("old", "fp-b", "POST /x")).kind).toBe("new");
  });

  it("sweeps expired records in its alarm", async () => {
    const gate = freshGate();
    for (const k of ["a", "b"]) {
      const r = await gate.begin(k, "fp", "POST /x");
      if (r.kind === "new") await gate.complete(k, r.lease, response("{}"));
    }
    await age(gate, IDEMPOTENCY_TTL_MS);
    const fresh = await gate.begin("c", "fp", "POST /x");
    expect(fresh.kind).toBe("new");
    expect(await runDurableObjectAlarm(gate)).toBe(true);
    const keys = await runInDurableObject(gate, (_i, state) =>
      state.storage.sql
        .exec<{ key: string }>("SELECT key FROM idempotency ORDER BY key")
        .toArray()
        .map((r) => r.key),
    );
    expect(keys).toEqual(["c"]);
    // The next sweep is scheduled for when "c" expires.
    const alarm = await runInDurableObject(gate, (_i, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeGreaterThan(Date.now() + IDEMPOTENCY_TTL_MS - 60_000);
  });
});

describe("TenantGate usage counters", () => {
  it("counts each item id once, however often it is reported", async () => {
    const gate = freshGate();
    expect(await gate.countItems(["j1/0", "j1/1", "j1/1"])).toMatchObject({ counted: 2, total: 2 });
    expect(await gate.countItems(["j1/1", "j1/2"])).toMatchObject({ counted: 1, total: 3 });
    expect(await gate.countItems(["j1/0"])).toMatchObject({ counted: 0, total: 3 });
    expect(await gate.monthTotal()).toBe(3);
    expect(await gate.monthTotal(utcMonth(Date.now()))).toBe(3);
    expect(await gate.monthTotal("2000-01")).toBe(0);
  });
});

describe("TenantGate region moves", () => {
  it("carries usage and settled idempotency records to the new region's gate, once", async () => {
    const orgId = `org_move_${Date.now()}`;
    const from = tenantGate(env, { id: orgId, region: "us" });
    const to = tenantGate(env, { id: orgId, region: "eu" });
    await from.countItems(["a/0", "a/1", "a/2"]);
    const done = await from.begin("k-done", "fp", "POST /x");
    if (done.kind === "new") await from.complete("k-done", done.lease, response('{"x":1}'));
    await from.begin("k-running", "fp", "POST /x");

    await moveTenantGate(env, orgId, "us", "eu");
    await moveTenantGate(env, orgId, "us", "eu");

    expect(await to.monthTotal()).toBe(3);
    expect(await to.countItems(["a/1", "a/3"])).toMatchObject({ counted: 1, total: 4 });
    const replay = await to.begin("k-done", "fp", "POST /x");
    expect(replay.kind).toBe("replay");
    if (replay.kind === "replay") expect(new TextDecoder().decode(replay.response.body)).toBe('{"x":1}');
    // A request still running at the move was refused by then (503 org_moving); its key is not carried.
    expect((await to.begin("k-running", "fp", "POST /x")).kind).toBe("new");
  });
});
