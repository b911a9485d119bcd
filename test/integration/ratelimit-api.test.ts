import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { api, createOrg } from "../helpers/tenant";

type Problem = { code: string; detail: string };

/**
 * Moves a bucket's refill clock: ahead holds the refill back (so counts do not depend on how fast this
 * machine is), behind stands for time that has passed.
 */
async function holdRefill(orgId: string, ms: number): Promise<void> {
  await runInDurableObject(tenantGate(env, { id: orgId, region: "us" }), (_i, state) => {
    state.storage.sql.exec("UPDATE buckets SET updated_at = ?", Date.now() + ms);
  });
}

describe("rate limit through the Worker", () => {
  it("answers 429 rate_limited after the burst of 50, with Retry-After, and recovers after it", async () => {
    const { orgId, apiKey } = await createOrg({ permissions: ["org:read"] });
    const other = await createOrg({ permissions: ["org:read"] });
    expect((await api("/sig/policies", { key: apiKey })).status).toBe(200);
    await holdRefill(orgId, 60_000);

    const responses = await Promise.all(Array.from({ length: 60 }, () => api("/sig/policies", { key: apiKey })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);

    const res = responses.find((r) => r.status === 429)!;
    // The next token is at most 1/20 s away: Retry-After is its ceiling in seconds.
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(((await res.json()) as Problem).code).toBe("rate_limited");
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_/);
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    await Promise.all(responses.filter((r) => !r.bodyUsed).map((r) => r.body?.cancel()));

    // Another tenant has its own bucket.
    expect((await api("/sig/policies", { key: other.apiKey })).status).toBe(200);

    // Waiting the advertised Retry-After is enough: the bucket's clock is set as if that much time had
    // passed since its last refill (rather than sleeping for it).
    await holdRefill(orgId, -Number(res.headers.get("Retry-After")) * 1000);
    expect((await api("/sig/policies", { key: apiKey })).status).toBe(200);
  });
});
