import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { BucketName, TenantGate } from "../../durable-objects/tenant-gate";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { LocalBucket, marginOf } from "../../src/http/local-rate";

/** An isolate's estimate of a bucket (src/http/local-rate.ts) against the real TenantGate. */
let n = 0;
function freshGate(): DurableObjectStub<TenantGate> {
  return tenantGate(env, { id: `org_local_${++n}_${Date.now()}`, region: "us" });
}

async function gateTokens(gate: DurableObjectStub<TenantGate>, bucket: BucketName = "api"): Promise<number> {
  return runInDurableObject(gate, (_i, state) =>
    Number(state.storage.sql.exec<{ tokens: number }>("SELECT tokens FROM buckets WHERE name = ?", bucket).one().tokens),
  );
}

/** Holds the gate's refill back, so the counts do not depend on how fast this machine is. */
async function holdRefill(gate: DurableObjectStub<TenantGate>): Promise<void> {
  await runInDurableObject(gate, (_i, state) => {
    state.storage.sql.exec("UPDATE buckets SET updated_at = ?", Date.now() + 60_000);
  });
}

function harness(bucket: BucketName = "api") {
  const gate = freshGate();
  const local = new LocalBucket(bucket);
  const background: Promise<unknown>[] = [];
  let calls = 0;
  const take = () =>
    local.take(
      (spent, want) => {
        calls++;
        return gate.settle(bucket, spent, want);
      },
      (p) => background.push(p),
    );
  return { gate, local, background, take, calls: () => calls };
}

describe("rate limit on the isolate's estimate", () => {
  it("asks the gate first, then admits without a round trip and reports the spends in the background", async () => {
    const h = harness();
    expect(await h.take()).toEqual({ ok: true });
    expect(h.calls()).toBe(1);
    expect(await gateTokens(h.gate)).toBe(49);

    for (let i = 0; i < 5; i++) expect(await h.take()).toEqual({ ok: true });
    // No gate call for those five: the gate has not heard of them yet.
    expect(h.calls()).toBe(1);
    expect(await gateTokens(h.gate)).toBe(49);

    // One report for all of them, within FLUSH_MS (the bucket has refilled to its burst meanwhile).
    expect(h.background).toHaveLength(1);
    await Promise.all(h.background);
    expect(h.calls()).toBe(2);
    expect(await gateTokens(h.gate)).toBeCloseTo(45, 5);
  });

  it("lets the gate decide near empty: exactly the burst is admitted, the rest get 429 with Retry-After 1", async () => {
    const h = harness();
    expect(await h.take()).toEqual({ ok: true });
    await holdRefill(h.gate);
    const results = await Promise.all(Array.from({ length: 60 }, () => h.take()));
    expect(results.filter((r) => r.ok)).toHaveLength(49);
    expect(results.filter((r) => !r.ok)).toEqual(Array(11).fill({ ok: false, retryAfterSeconds: 1 }));
    // Every admitted request was charged to the gate: nothing is left over.
    const left = await gateTokens(h.gate);
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left).toBeLessThan(1);
    // The estimate never admits the last margin of the burst on its own.
    expect(h.local.estimate()!).toBeLessThan(marginOf("api") + 1);
  });

  it("charges spends past empty as a debt that delays the next requests", async () => {
    const gate = freshGate();
    const r = await gate.settle("api", 60, 1);
    expect(r.granted).toBe(0);
    expect(r.tokens).toBe(-10);
    // 11 tokens to refill at 20/s: the next one in 0.55 s, so Retry-After is 1.
    expect(r.retryAfterSeconds).toBe(1);
    const deeper = await gate.settle("api", 40, 0);
    expect(deeper.tokens).toBeLessThanOrEqual(-49);
    expect(deeper.retryAfterSeconds).toBe(3);
    expect(await gate.take("api")).toMatchObject({ ok: false });
  });

  it("keeps the image bucket's larger margin", async () => {
    const h = harness("image");
    await h.take();
    await holdRefill(h.gate);
    const results = await Promise.all(Array.from({ length: 210 }, () => h.take()));
    expect(results.filter((r) => r.ok)).toHaveLength(199);
    expect(marginOf("image")).toBe(40);
  });
});

describe("writes", () => {
  it("always ask the gate, carrying the spends of reads admitted on the estimate", async () => {
    const h = harness();
    await h.take();
    for (let i = 0; i < 3; i++) await h.take();
    expect(h.calls()).toBe(1);
    const write = await h.local.take(
      (spent, want) => h.gate.settle("api", spent, want),
      (p) => h.background.push(p),
      false,
    );
    expect(write).toEqual({ ok: true });
    // First call 50 -> 49; the write charged the three reads and took its own token (refill aside).
    expect(await gateTokens(h.gate)).toBeLessThanOrEqual(46 + 1);
    expect(h.local.estimate()!).toBeLessThan(47);
  });
});
