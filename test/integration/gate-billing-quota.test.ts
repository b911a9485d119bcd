import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assertBilling, assertQuota, countUsage, effectiveBilling, secondsUntilNextUtcMonth } from "../../src/http/billing";
import type { Org } from "../../src/domain/tenancy";
import { ProblemError } from "../../src/http/problem";
import { directory } from "../../src/storage/directory";
import { api, createOrg, type CreateOrgOptions } from "../helpers/tenant";

async function org(opts: CreateOrgOptions): Promise<Org> {
  const { orgId } = await createOrg(opts);
  return (await directory(env.DIRECTORY).getOrg(orgId))!;
}

async function problemOf(p: Promise<unknown>): Promise<ProblemError | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
}

describe("billing gate", () => {
  it("402 billing_required while inactive or canceled; open when active", async () => {
    expect(await problemOf(assertBilling(env, await org({ billing: "active" })))).toBeNull();
    for (const billing of ["inactive", "canceled"] as const) {
      const err = await problemOf(assertBilling(env, await org({ billing })));
      expect(err?.code, billing).toBe("billing_required");
      expect(err?.status).toBe(402);
    }
  });

  it("an organisation billed through its parent follows the parent's state, up the chain", async () => {
    const paying = await org({ billing: "active" });
    const lapsed = await org({ billing: "canceled" });
    expect(await problemOf(assertBilling(env, await org({ billing: "parent", parentId: paying.id })))).toBeNull();
    const child = await org({ billing: "parent", parentId: lapsed.id });
    expect((await problemOf(assertBilling(env, child)))?.code).toBe("billing_required");
    const grandchild = await org({ billing: "parent", parentId: child.id });
    expect((await problemOf(assertBilling(env, grandchild)))?.code).toBe("billing_required");
    expect(effectiveBilling([{ billing: "parent" }])).toBe("inactive");
  });

  it("guards a billed route through the Worker (POST /platform/keys)", async () => {
    const inactive = await createOrg({ billing: "inactive" });
    const res = await api("/platform/keys", { method: "POST", key: inactive.apiKey, json: { permissions: ["org:read"] } });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { code: string }).code).toBe("billing_required");
    // Reads stay open.
    expect((await api("/sig/policies", { key: inactive.apiKey })).status).toBe(200);
  });
});

describe("quota gate and usage counter", () => {
  it("429 quota_exceeded with Retry-After until the next UTC month once the month's items would pass the quota", async () => {
    const o = await org({ monthlyQuota: 3 });
    expect(await countUsage(env, o, ["job1/0", "job1/1"])).toMatchObject({ counted: 2, total: 2 });
    // A redelivered item is not counted again.
    expect(await countUsage(env, o, ["job1/1"])).toMatchObject({ counted: 0, total: 2 });
    expect(await problemOf(assertQuota(env, { org: o }, 1))).toBeNull();
    const err = await problemOf(assertQuota(env, { org: o }, 2));
    expect(err?.code).toBe("quota_exceeded");
    expect(err?.status).toBe(429);
    const retryAfter = Number(err?.headers["Retry-After"]);
    const expected = secondsUntilNextUtcMonth();
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(2);
  });

  it("null quota is unlimited", async () => {
    const o = await org({});
    await countUsage(
      env,
      o,
      Array.from({ length: 50 }, (_, i) => `j/${i}`),
    );
    expect(await problemOf(assertQuota(env, { org: o }, 1_000_000))).toBeNull();
  });

  it("computes the seconds to the next UTC month", () => {
    expect(secondsUntilNextUtcMonth(new Date("2026-11-30T23:59:00Z"))).toBe(60);
    expect(secondsUntilNextUtcMonth(new Date("2026-12-31T00:00:00Z"))).toBe(86400);
    expect(secondsUntilNextUtcMonth(new Date("2026-02-01T00:00:00Z"))).toBe(28 * 86400);
  });
});
