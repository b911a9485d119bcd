import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PolicySpecSchema, canonicalJson, type PolicySpecInput } from "../../src/domain/policy";
import { POLICY_CACHE_REFRESH_AFTER_MS, POLICY_CACHE_TTL_MS, setPolicyCacheClock } from "../../src/storage/policy-cache";
import { type CheckResultBody, checkForm, enrolWriter, postCheck } from "../helpers/checks";
import { signaturePng } from "../helpers/signatures";
import { REGION_BASE, api, createOrg, operator } from "../helpers/tenant";
import { until } from "../helpers/wait";

/**
 * The isolate's cache of published policies (src/storage/policy-cache.ts): GET /sig/policies and
 * GET /sig/policies/{name} read it for up to POLICY_CACHE_TTL_MS (refreshed behind the response once it is
 * POLICY_CACHE_REFRESH_AFTER_MS old); a publish through the service drops it at
 * once; checks and writes never use it. A version written straight into the region's database (bypassing
 * the service, as a publish on another isolate looks from here) shows which requests were served from the
 * cache. The cache's clock is set by the test, so an entry's age is stepped rather than waited for.
 */

type PolicyBody = { name: string; version: number; spec: { min_references: number }; builtin: boolean };

let now = Date.now();
beforeEach(() => {
  now = Date.now();
  setPolicyCacheClock(() => now);
});
afterEach(() => setPolicyCacheClock(null));

/** Publishes `spec` as the next version of `name` in the organisation's region, without the service. */
async function publishBehindTheServicesBack(db: D1Database, orgId: string, name: string, spec: PolicySpecInput): Promise<number> {
  const row = await db
    .prepare("SELECT COALESCE(MAX(version), 0) AS v FROM policies WHERE org_id = ? AND name = ?")
    .bind(orgId, name)
    .first<{ v: number }>();
  // Version 1 of `default` is the built-in one, never stored.
  const version = Math.max(row?.v ?? 0, name === "default" ? 1 : 0) + 1;
  await db
    .prepare("INSERT INTO policies (org_id, name, version, spec, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(orgId, name, version, canonicalJson(PolicySpecSchema.parse(spec)), "test:elsewhere", new Date().toISOString())
    .run();
  return version;
}

async function listed(key: string): Promise<[string, number][]> {
  const res = await api("/sig/policies", { key });
  expect(res.status).toBe(200);
  const { policies } = (await res.json()) as { policies: PolicyBody[] };
  return policies.map((p) => [p.name, p.version]);
}

async function latest(key: string, name: string): Promise<PolicyBody> {
  const res = await api(`/sig/policies/${name}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as PolicyBody;
}

describe("policy cache", () => {
  it("shows a policy published through the service at once on the isolate that published it", async () => {
    const org = await createOrg();
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    expect((await api("/sig/policies/strict", { key: org.apiKey })).status).toBe(404);

    const put = await api("/sig/policies/strict", { method: "PUT", key: org.apiKey, json: { min_references: 2 } });
    expect(put.status).toBe(201);
    // No time passes on the cache's clock: only the publish's drop can explain the new answers.
    expect(await listed(org.apiKey)).toEqual([
      ["strict", 1],
      ["default", 1],
    ]);
    expect(await latest(org.apiKey, "strict")).toMatchObject({ version: 1, spec: { min_references: 2 } });

    expect((await api("/sig/policies/strict", { method: "PUT", key: org.apiKey, json: { min_references: 3 } })).status).toBe(201);
    expect(await latest(org.apiKey, "strict")).toMatchObject({ version: 2, spec: { min_references: 3 } });
    expect(await listed(org.apiKey)).toEqual([
      ["strict", 2],
      ["default", 1],
    ]);
  });

  it("answers reads from the cache while it is young, and from the database once it has expired", async () => {
    const org = await createOrg();
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    expect((await latest(org.apiKey, "default")).builtin).toBe(true);

    const version = await publishBehindTheServicesBack(env.DB_US, org.orgId, "default", { min_references: 4 });
    expect(version).toBe(2);

    // While the entry is young: the list and the latest version are the cached ones, as another isolate's
    // change would look from here.
    now += POLICY_CACHE_REFRESH_AFTER_MS - 1;
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    expect(await latest(org.apiKey, "default")).toMatchObject({ version: 1, builtin: true });
    // An explicit version is always read from the database (versions are immutable anyway).
    expect(await (await api("/sig/policies/default?version=2", { key: org.apiKey })).json()).toMatchObject({
      version: 2,
      spec: { min_references: 4 },
    });

    // At POLICY_CACHE_TTL_MS (no request came in between to refresh it) the entry is gone: the database's list.
    now += POLICY_CACHE_TTL_MS - POLICY_CACHE_REFRESH_AFTER_MS + 1;
    expect(await listed(org.apiKey)).toEqual([["default", 2]]);
    expect(await latest(org.apiKey, "default")).toMatchObject({ version: 2, builtin: false, spec: { min_references: 4 } });
  });

  it("serves an older entry at once and refreshes it behind the response, so a busy tenant never waits", async () => {
    const org = await createOrg();
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    await publishBehindTheServicesBack(env.DB_US, org.orgId, "strict", { min_references: 2 });

    now += POLICY_CACHE_REFRESH_AFTER_MS;
    // This read is answered from the entry, still within its lifetime...
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    // ...and started a refresh: with the cache's clock standing still, the next reads get the new list.
    await until(
      () => listed(org.apiKey),
      (names) => names.length === 2,
      { what: "the background refresh to store the new list" },
    );
    expect(await listed(org.apiKey)).toEqual([
      ["strict", 1],
      ["default", 1],
    ]);
  });

  it("keeps each organisation's list apart", async () => {
    const a = await createOrg();
    const b = await createOrg();
    expect(await listed(a.apiKey)).toEqual([["default", 1]]);
    expect(await listed(b.apiKey)).toEqual([["default", 1]]);
    expect((await api("/sig/policies/mine", { method: "PUT", key: a.apiKey, json: {} })).status).toBe(201);
    expect(await listed(a.apiKey)).toEqual([
      ["mine", 1],
      ["default", 1],
    ]);
    expect(await listed(b.apiKey)).toEqual([["default", 1]]);
    expect((await api("/sig/policies/mine", { key: b.apiKey })).status).toBe(404);
  });

  it("never serves a write from the cache: a publish compares with the database's latest version", async () => {
    const org = await createOrg();
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    await publishBehindTheServicesBack(env.DB_US, org.orgId, "strict", { min_references: 2 });
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);

    // The same spec as the version written elsewhere: the publish finds it (200, version 1), not a new one.
    const same = await api("/sig/policies/strict", { method: "PUT", key: org.apiKey, json: { min_references: 2 } });
    expect(same.status).toBe(200);
    expect(await same.json()).toMatchObject({ name: "strict", version: 1 });
    // And the publish dropped the cached list (no time passed on the cache's clock).
    expect(await listed(org.apiKey)).toEqual([
      ["strict", 1],
      ["default", 1],
    ]);
  });

  it("never decides a check on a cached policy: a check right after a change elsewhere applies it", async () => {
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", 11, 3);
    const body = () =>
      checkForm({ items: [{ file: "doc", subject_reference: "alice", input_type: "signature_image" }] }, { doc: signaturePng(11, 7) });

    const before = await postCheck(org.apiKey, body());
    const beforeResult = (await before.json()) as CheckResultBody;
    expect(before.status, JSON.stringify(beforeResult)).toBe(200);
    expect(beforeResult.versions.policy).toBe("default@1");
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(beforeResult.decision);

    expect(await listed(org.apiKey)).toEqual([["default", 1]]);
    // Elsewhere, the default policy now approves nothing short of a perfect score.
    await publishBehindTheServicesBack(env.DB_US, org.orgId, "default", { thresholds: { auto_approve: 1, approve: 1, flag: 1 } });
    // The read still shows the cached list...
    expect(await listed(org.apiKey)).toEqual([["default", 1]]);

    // ...but the check reads the database: it applies version 2, and the same signature is no longer approved.
    const after = await postCheck(org.apiKey, body());
    const afterResult = (await after.json()) as CheckResultBody;
    expect(after.status, JSON.stringify(afterResult)).toBe(200);
    expect(afterResult.versions.policy).toBe("default@2");
    expect(afterResult.score).toBeLessThan(1);
    expect(["APPROVE", "AUTO_APPROVE", "FLAG"]).not.toContain(afterResult.decision);
  });

  it("keys lists by region as well: after a move, reads are answered from the new region's database", async () => {
    const org = await createOrg();
    expect((await api("/sig/policies/strict", { method: "PUT", key: org.apiKey, json: { min_references: 2 } })).status).toBe(201);
    expect(await listed(org.apiKey)).toEqual([
      ["strict", 1],
      ["default", 1],
    ]);
    await operator("POST", `/platform/orgs/${org.orgId}/move/begin`, { region: "eu" });
    await operator("POST", `/platform/orgs/${org.orgId}/move/complete`);
    // A version written in the new region after the copy, behind the service's back.
    await publishBehindTheServicesBack(env.DB_EU, org.orgId, "strict", { min_references: 5 });
    // No time later on the cache's clock, the read is the new region's, not the list cached in the old one.
    const res = await api("/sig/policies", { key: org.apiKey, base: REGION_BASE.eu });
    expect(res.status).toBe(200);
    const { policies } = (await res.json()) as { policies: PolicyBody[] };
    expect(policies.map((p) => [p.name, p.version])).toEqual([
      ["strict", 2],
      ["default", 1],
    ]);
  });
});
