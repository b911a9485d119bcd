import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { dashboardToken } from "../helpers/jwt";
import { api, createOrg, operator } from "../helpers/tenant";

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string };
}

async function me(key: string, serviceOrg?: string) {
  return api("/platform/me", { key, headers: serviceOrg ? { "Service-Org": serviceOrg } : {} });
}

describe("acting in a descendant organisation (Service-Org)", () => {
  // root -> child -> grandchild, plus an unrelated organisation and a sibling of root's child.
  let root: Awaited<ReturnType<typeof createOrg>>;
  let child: Awaited<ReturnType<typeof createOrg>>;
  let grandchild: Awaited<ReturnType<typeof createOrg>>;
  let stranger: Awaited<ReturnType<typeof createOrg>>;
  beforeAll(async () => {
    root = await createOrg({ name: "root", permissions: ["org:read", "org:children:access"] });
    child = await createOrg({ name: "child", parentId: root.orgId, region: "eu", permissions: ["org:read", "org:children:access"] });
    grandchild = await createOrg({ name: "grandchild", parentId: child.orgId, permissions: ["org:read"] });
    stranger = await createOrg({ name: "stranger", permissions: ["org:read"] });
  });

  it("acts in a child, audited there as org.act_as by the caller", async () => {
    const res = await me(root.apiKey, child.orgId);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { acting_as: boolean; caller_org_id: string; org: { org_id: string; region: string } };
    expect(body).toMatchObject({ acting_as: true, caller_org_id: root.orgId, org: { org_id: child.orgId, region: "eu" } });
    // The child lives in eu: the audit entry is in its region, recorded with the caller's key as actor.
    const rows = await env.DB_EU.prepare(
      "SELECT actor, action, target, detail, request_id FROM audit_log WHERE org_id = ? AND action = 'org.act_as'",
    )
      .bind(child.orgId)
      .all<{ actor: string; action: string; target: string; detail: string; request_id: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]).toMatchObject({
      actor: `key:${root.keyId}`,
      target: "GET /platform/me",
      request_id: res.headers.get("X-Request-Id"),
    });
    expect(JSON.parse(rows.results[0].detail)).toEqual({ from_org: root.orgId });
  });

  it("a dashboard user acts in a child too, audited as user:<sub>", async () => {
    const token = await dashboardToken({ orgId: root.orgId, sub: "dana", permissions: ["org:read", "org:children:access"] });
    const res = await me(token, grandchild.orgId);
    expect(res.status).toBe(200);
    const row = await env.DB_US.prepare("SELECT actor FROM audit_log WHERE org_id = ? AND action = 'org.act_as' AND actor = 'user:dana'")
      .bind(grandchild.orgId)
      .first();
    expect(row).toEqual({ actor: "user:dana" });
  });

  it("acts in a grandchild (any descendant)", async () => {
    const res = await me(root.apiKey, grandchild.orgId);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { org: { org_id: string } }).org.org_id).toBe(grandchild.orgId);
  });

  it("sending one's own organisation is not acting as another", async () => {
    const res = await me(root.apiKey, root.orgId);
    expect(((await res.json()) as { acting_as: boolean }).acting_as).toBe(false);
  });

  it("404 for a non-descendant: an unrelated org, the parent, and an unknown or malformed id", async () => {
    for (const target of [stranger.orgId, root.orgId, "org_01JD0000000000000000000000", "not-an-org"]) {
      const res = await me(child.apiKey, target);
      expect(res.status, target).toBe(404);
      expect((await problem(res)).code).toBe("not_found");
    }
    // A malformed value is not echoed back at length.
    const long = await problem(await me(child.apiKey, "x".repeat(5000)));
    expect(long.code).toBe("not_found");
    expect(long.detail.length).toBeLessThan(200);
    // Nothing is audited in the organisation that was refused.
    const rows = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE org_id = ? AND action = 'org.act_as'")
      .bind(stranger.orgId)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("400 for more than one organisation in Service-Org", async () => {
    const res = await me(root.apiKey, `${child.orgId}, ${grandchild.orgId}`);
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe("invalid_request");
  });

  it("403 without org:children:access, naming the permission", async () => {
    const res = await me(grandchild.apiKey, child.orgId);
    expect(res.status).toBe(403);
    const body = await problem(res);
    expect(body.code).toBe("permission_denied");
    expect(body.detail).toContain("org:children:access");
  });

  it("suspending an organisation refuses it and every descendant, until lifted", async () => {
    const top = await createOrg({ name: "top", permissions: ["org:read", "org:children:access"] });
    const mid = await createOrg({ name: "mid", parentId: top.orgId, permissions: ["org:read"] });
    const leaf = await createOrg({ name: "leaf", parentId: mid.orgId, permissions: ["org:read"] });
    await operator("POST", `/platform/orgs/${mid.orgId}/suspend`);

    for (const key of [mid.apiKey, leaf.apiKey]) {
      const res = await me(key);
      expect(res.status).toBe(401);
      const body = await problem(res);
      expect(body.code).toBe("unauthorized");
      expect(body.detail).toMatch(/suspended/);
    }
    // The parent above is untouched, but cannot act in the suspended subtree either.
    expect((await me(top.apiKey)).status).toBe(200);
    expect((await me(top.apiKey, leaf.orgId)).status).toBe(401);

    // Dashboard users of the subtree are refused the same way.
    const token = await dashboardToken({ orgId: leaf.orgId, permissions: ["org:read"] });
    expect((await me(token)).status).toBe(401);

    await operator("POST", `/platform/orgs/${mid.orgId}/unsuspend`);
    expect((await me(token)).status).toBe(200);
    expect((await me(leaf.apiKey)).status).toBe(200);
    expect((await me(top.apiKey, leaf.orgId)).status).toBe(200);
  });
});
