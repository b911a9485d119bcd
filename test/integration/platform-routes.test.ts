import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, mintKey, operator } from "../helpers/tenant";

const op = (path: string, init: Parameters<typeof api>[1] = {}) => api(path, { ...init, key: env.OPERATOR_TOKEN });

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string; errors?: { field: string }[]; permissions?: string[] };
}

describe("operator credential", () => {
  it("401 without it, with a wrong one, or with a tenant's API key", async () => {
    const { orgId, apiKey } = await createOrg();
    for (const key of [undefined, "wrong-token", env.OPERATOR_TOKEN + "x", apiKey]) {
      const res = await api(`/platform/orgs/${orgId}`, { key });
      expect(res.status, String(key)).toBe(401);
      expect((await problem(res)).code).toBe("unauthorized");
    }
    expect((await op(`/platform/orgs/${orgId}`)).status).toBe(200);
  });
});

describe("organisations", () => {
  it("creates with defaults and reads back", async () => {
    const res = await op("/platform/orgs", { method: "POST", json: { name: "Acme", region: "eu" } });
    expect(res.status).toBe(201);
    const org = (await res.json()) as Record<string, unknown>;
    expect(org).toMatchObject({
      name: "Acme",
      region: "eu",
      parent_id: null,
      moving_to: null,
      billing: "active",
      pinned_version: "2026-09-27",
      learning: true,
      allow_hosts: [],
      allow_buckets: [],
      monthly_quota: null,
      inbox_ttl: 86400,
      suspended: false,
    });
    expect(org.org_id).toMatch(/^org_[0-9A-Z]{26}$/);
    expect(await (await op(`/platform/orgs/${org.org_id}`)).json()).toEqual(org);
  });

  it("keeps every setting given at creation", async () => {
    const parent = await createOrg();
    const res = await op("/platform/orgs", {
      method: "POST",
      json: {
        name: "Child",
        region: "us",
        parent_id: parent.orgId,
        billing: "parent",
        pinned_version: "2026-09-27",
        learning: false,
        allow_hosts: ["docs.example.com", "8.8.8.8:8080"],
        allow_buckets: ["scans"],
        monthly_quota: 1000,
        inbox_ttl: 3600,
      },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      parent_id: parent.orgId,
      billing: "parent",
      learning: false,
      allow_hosts: ["docs.example.com", "8.8.8.8:8080"],
      allow_buckets: ["scans"],
      monthly_quota: 1000,
      inbox_ttl: 3600,
    });
  });

  it("400 naming the field for invalid input", async () => {
    const cases: [unknown, string][] = [
      [{ name: "x", region: "ap" }, "body.region"],
      [{ region: "us" }, "body.name"],
      [{ name: "x", region: "us", billing: "free" }, "body.billing"],
      [{ name: "x", region: "us", inbox_ttl: 5 }, "body.inbox_ttl"],
      [{ name: "x", region: "us", parent_id: "org_01JD0000000000000000000000" }, "body.parent_id"],
      [{ name: "x", region: "us", billing: "parent" }, "body.billing"],
      [{ name: "x", region: "us", allow_hosts: ["https://x/"] }, "body.allow_hosts.0"],
      [{ name: "x", region: "us", pinned_version: "2019-01-01" }, "body.pinned_version"],
      [{ name: "x", region: "us", pinned_version: "tomorrow" }, "body.pinned_version"],
    ];
    for (const [json, field] of cases) {
      const res = await op("/platform/orgs", { method: "POST", json });
      expect(res.status, field).toBe(400);
      expect((await problem(res)).errors?.[0].field).toBe(field);
    }
    const malformed = await op("/platform/orgs", { method: "POST", body: "{", headers: { "Content-Type": "application/json" } });
    expect(malformed.status).toBe(400);
  });

  it("404 for an unknown or malformed organisation id", async () => {
    expect((await op("/platform/orgs/org_01JD0000000000000000000000")).status).toBe(404);
    expect((await op("/platform/orgs/nope")).status).toBe(404);
  });

  it("changes the billing state, audited as operator", async () => {
    const { orgId } = await createOrg();
    const res = await op(`/platform/orgs/${orgId}/billing`, { method: "PUT", json: { billing: "canceled" } });
    expect(res.status).toBe(200);
    expect(((await (await op(`/platform/orgs/${orgId}`)).json()) as { billing: string }).billing).toBe("canceled");
    const row = await env.DB_US.prepare("SELECT actor, detail FROM audit_log WHERE org_id = ? AND action = 'org.billing'")
      .bind(orgId)
      .first<{ actor: string; detail: string }>();
    expect(row!.actor).toBe("operator");
    expect(JSON.parse(row!.detail)).toEqual({ from: "active", to: "canceled" });
  });
});

describe("API keys", () => {
  let org: Awaited<ReturnType<typeof createOrg>>;
  beforeAll(async () => {
    org = await createOrg({ permissions: ["org:read", "sig:settings:manage", "sig:checks:read"] });
  });

  it("lists keys by prefix only, newest first, never the secret", async () => {
    const second = await mintKey(org.orgId, ["org:read"]);
    const res = await op(`/platform/orgs/${org.orgId}/keys`);
    const { keys } = (await res.json()) as { keys: { key_id: string; prefix: string; permissions: string[] }[] };
    expect(keys.map((k) => k.key_id)).toEqual([second.keyId, org.keyId]);
    expect(keys[1].prefix).toBe(org.apiKey.slice(0, 15));
    const text = JSON.stringify(keys);
    expect(text).not.toContain(org.apiKey.slice(-32));
    expect(text).not.toContain("secret");
    // The tenant sees the same list.
    const mine = (await (await api("/platform/keys", { key: org.apiKey })).json()) as { keys: { key_id: string }[] };
    expect(mine.keys.map((k) => k.key_id)).toEqual([second.keyId, org.keyId]);
  });

  it("shows the full key once, with Cache-Control: no-store", async () => {
    const res = await op(`/platform/orgs/${org.orgId}/keys`, { method: "POST", json: { permissions: ["org:read"], name: "ci" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = (await res.json()) as { key: string; prefix: string; name: string; created_by: string };
    expect(body.key.startsWith(body.prefix)).toBe(true);
    expect(body).toMatchObject({ name: "ci", created_by: "operator" });
  });

  it("400 for unknown permissions or a past expiry", async () => {
    expect((await op(`/platform/orgs/${org.orgId}/keys`, { method: "POST", json: { permissions: ["root"] } })).status).toBe(400);
    expect((await op(`/platform/orgs/${org.orgId}/keys`, { method: "POST", json: { permissions: [] } })).status).toBe(400);
    const past = await op(`/platform/orgs/${org.orgId}/keys`, {
      method: "POST",
      json: { permissions: ["org:read"], expires_at: "2020-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(400);
    expect((await problem(past)).errors?.[0].field).toBe("body.expires_at");
  });

  it("a tenant mints keys with a subset of its own permissions, never more", async () => {
    const denied = await api("/platform/keys", {
      method: "POST",
      key: org.apiKey,
      json: { permissions: ["org:read", "sig:checks:create", "org:children:access"] },
    });
    expect(denied.status).toBe(403);
    const body = await problem(denied);
    expect(body.code).toBe("permission_denied");
    expect(body.permissions).toEqual(["sig:checks:create", "org:children:access"]);

    const res = await api("/platform/keys", { method: "POST", key: org.apiKey, json: { permissions: ["sig:checks:read", "org:read"] } });
    expect(res.status).toBe(201);
    const minted = (await res.json()) as { key: string; key_id: string; created_by: string; org_id: string };
    expect(minted).toMatchObject({ created_by: `key:${org.keyId}`, org_id: org.orgId });
    const me = (await (await api("/platform/me", { key: minted.key })).json()) as { permissions: string[] };
    expect(me.permissions).toEqual(["org:read", "sig:checks:read"]);

    // The minted key can revoke nothing (no sig:settings:manage); the creator can revoke it.
    expect((await api(`/platform/keys/${minted.key_id}`, { method: "DELETE", key: minted.key })).status).toBe(403);
    expect((await api(`/platform/keys/${minted.key_id}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await api("/platform/me", { key: minted.key })).status).toBe(401);
  });

  it("a tenant cannot revoke another organisation's key (404)", async () => {
    const other = await createOrg();
    expect((await api(`/platform/keys/${other.keyId}`, { method: "DELETE", key: org.apiKey })).status).toBe(404);
    expect((await api("/platform/me", { key: other.apiKey })).status).toBe(200);
  });

  it("402 billing_required for a tenant minting while billing is inactive", async () => {
    const unpaid = await createOrg({ billing: "inactive", permissions: ["org:read", "sig:settings:manage"] });
    const res = await api("/platform/keys", { method: "POST", key: unpaid.apiKey, json: { permissions: ["org:read"] } });
    expect(res.status).toBe(402);
    expect((await problem(res)).code).toBe("billing_required");
    // Reads stay open without billing.
    expect((await api("/platform/keys", { key: unpaid.apiKey })).status).toBe(200);
  });
});

describe("audit log", () => {
  it("pages newest first with a cursor the route recognises as its own", async () => {
    const { orgId } = await createOrg();
    for (let i = 0; i < 4; i++) await operator("POST", `/platform/orgs/${orgId}/${i % 2 ? "unsuspend" : "suspend"}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await op(`/platform/orgs/${orgId}/audit?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { entries: { action: string; actor: string; created_at: string }[]; next_cursor: string | null };
      seen.push(...page.entries.map((e) => e.action));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    // org.create, api_key.create, then suspend/unsuspend twice: newest first.
    expect(seen).toEqual(["org.unsuspend", "org.suspend", "org.unsuspend", "org.suspend", "api_key.create", "org.create"]);
    expect(pages).toBe(3);
  });

  it("400 for a forged cursor or one issued for another organisation", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const first = (await (await op(`/platform/orgs/${a.orgId}/audit?limit=1`)).json()) as { next_cursor: string };
    expect(first.next_cursor).toBeTruthy();
    const forged = await op(`/platform/orgs/${a.orgId}/audit?cursor=${encodeURIComponent(first.next_cursor.slice(0, -2) + "AA")}`);
    expect(forged.status).toBe(400);
    const foreign = await op(`/platform/orgs/${b.orgId}/audit?cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(foreign.status).toBe(400);
    // An empty cursor is not the first page.
    expect((await op(`/platform/orgs/${a.orgId}/audit?cursor=`)).status).toBe(400);
    expect((await api("/platform/audit?cursor=", { key: a.apiKey })).status).toBe(400);
    // The tenant route reads its own organisation's log.
    const mine = (await (await api("/platform/audit", { key: a.apiKey })).json()) as { entries: { action: string }[] };
    expect(mine.entries.map((e) => e.action)).toEqual(["api_key.create", "org.create"]);
  });
});

describe("OpenAPI", () => {
  it("documents the platform routes with the operator security scheme", async () => {
    const doc = (await (await api("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes?: Record<string, unknown> };
    };
    for (const p of [
      "/platform/orgs",
      "/platform/orgs/{org_id}",
      "/platform/orgs/{org_id}/keys",
      "/platform/orgs/{org_id}/move",
      "/platform/orgs/{org_id}/audit",
      "/platform/me",
      "/platform/keys",
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(doc.paths["/platform/orgs"].post.security).toEqual([{ operator: [] }]);
    expect(doc.components.securitySchemes?.operator).toBeDefined();
  });
});
