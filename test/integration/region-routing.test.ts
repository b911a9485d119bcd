import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createOrg, operator, REGION_BASE } from "../helpers/tenant";

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string; region?: string; api_host?: string };
}

describe("regions", () => {
  it("the global address routes by key; a region's own address answers only for its organisations", async () => {
    const eu = await createOrg({ region: "eu", permissions: ["org:read"] });
    expect((await api("/platform/me", { key: eu.apiKey })).status).toBe(200);
    expect((await api("/platform/me", { key: eu.apiKey, base: REGION_BASE.eu })).status).toBe(200);

    const res = await api("/platform/me", { key: eu.apiKey, base: REGION_BASE.us });
    expect(res.status).toBe(421);
    const body = await problem(res);
    expect(body).toMatchObject({ code: "wrong_region", region: "eu", api_host: "eu.api.countersign.localhost" });
  });

  it("503 org_moving with Retry-After while a move runs, then the same key works in the new region with its data", async () => {
    const org = await createOrg({ region: "us", permissions: ["org:read"] });
    // Data in the old region: an audit row (org.create is already there) and a file under the org's prefix.
    await env.FILES_US.put(`orgs/${org.orgId}/inbox/a.txt`, "hello", { httpMetadata: { contentType: "text/plain" } });
    await env.FILES_US.put(`orgs/${org.orgId}-other/b.txt`, "not mine");
    const usRowsBefore = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE org_id = ?")
      .bind(org.orgId)
      .first<{ n: number }>();
    expect(usRowsBefore!.n).toBeGreaterThanOrEqual(2); // org.create, api_key.create

    const begun = await operator("POST", `/platform/orgs/${org.orgId}/move/begin`, { region: "eu" });
    expect(begun.status).toBe(202);
    const res = await api("/platform/me", { key: org.apiKey });
    expect(res.status).toBe(503);
    expect((await problem(res)).code).toBe("org_moving");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    // A second move cannot start meanwhile.
    const again = await api(`/platform/orgs/${org.orgId}/move`, { method: "POST", key: env.OPERATOR_TOKEN, json: { region: "eu" } });
    expect(again.status).toBe(409);

    const done = await operator("POST", `/platform/orgs/${org.orgId}/move/complete`);
    expect(await done.json()).toMatchObject({ org_id: org.orgId, region: "eu", moving_to: null });

    // The same key keeps working (its region hint still says us: the directory is authoritative).
    expect(org.apiKey.startsWith("svc_test_1u")).toBe(true);
    const after = await api("/platform/me", { key: org.apiKey });
    expect(after.status).toBe(200);
    expect(((await after.json()) as { org: { region: string } }).org.region).toBe("eu");
    expect((await api("/platform/me", { key: org.apiKey, base: REGION_BASE.eu })).status).toBe(200);
    expect((await api("/platform/me", { key: org.apiKey, base: REGION_BASE.us })).status).toBe(421);

    // Rows and files moved; another organisation's look-alike prefix was left alone.
    const euRows = await env.DB_EU.prepare("SELECT action FROM audit_log WHERE org_id = ? ORDER BY id")
      .bind(org.orgId)
      .all<{ action: string }>();
    expect(euRows.results.map((r) => r.action)).toEqual(
      expect.arrayContaining(["org.create", "api_key.create", "org.move_begin", "org.move"]),
    );
    const usRows = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE org_id = ?").bind(org.orgId).first<{ n: number }>();
    expect(usRows!.n).toBe(0);
    const file = await env.FILES_EU.get(`orgs/${org.orgId}/inbox/a.txt`);
    expect(await file!.text()).toBe("hello");
    expect(file!.httpMetadata?.contentType).toBe("text/plain");
    expect(await env.FILES_US.get(`orgs/${org.orgId}/inbox/a.txt`)).toBeNull();
    expect(await env.FILES_US.get(`orgs/${org.orgId}-other/b.txt`)).not.toBeNull();
  });

  it("one-step move, and refusing a move to the region it already lives in", async () => {
    const org = await createOrg({ region: "eu", permissions: ["org:read"] });
    const same = await api(`/platform/orgs/${org.orgId}/move`, { method: "POST", key: env.OPERATOR_TOKEN, json: { region: "eu" } });
    expect(same.status).toBe(409);
    const moved = await operator("POST", `/platform/orgs/${org.orgId}/move`, { region: "us" });
    expect(await moved.json()).toMatchObject({ region: "us", moving_to: null });
    expect((await api("/platform/me", { key: org.apiKey, base: REGION_BASE.us })).status).toBe(200);
  });
});
