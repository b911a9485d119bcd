import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, mintKey, operator } from "../helpers/tenant";

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string; status: number };
}

async function expectUnauthorized(res: Response, detail?: RegExp) {
  expect(res.status).toBe(401);
  const body = await problem(res);
  expect(body.code).toBe("unauthorized");
  if (detail) expect(body.detail).toMatch(detail);
  expect(res.headers.get("X-Request-Id")).toBeTruthy();
}

describe("API key authentication", () => {
  let org: Awaited<ReturnType<typeof createOrg>>;
  beforeAll(async () => {
    org = await createOrg({ permissions: ["org:read", "sig:checks:read"] });
  });

  it("accepts a valid key and names the caller by key id", async () => {
    const res = await api("/platform/me", { key: org.apiKey });
    expect(res.status).toBe(200);
    const me = (await res.json()) as { actor: string; credential: string; permissions: string[]; org: { org_id: string } };
    expect(me).toMatchObject({ actor: `key:${org.keyId}`, credential: "api_key", permissions: ["org:read", "sig:checks:read"] });
    expect(me.org.org_id).toBe(org.orgId);
  });

  it("401 without credentials", async () => {
    const res = await api("/platform/me");
    await expectUnauthorized(res, /Authorization/);
    expect(res.headers.get("WWW-Authenticate")).toContain("Bearer");
  });

  it("401 for a non-bearer Authorization header", async () => {
    await expectUnauthorized(await api("/platform/me", { headers: { Authorization: `Basic ${btoa("a:b")}` } }));
  });

  it("401 for a malformed key", async () => {
    await expectUnauthorized(await api("/platform/me", { key: "svc_test_short" }), /malformed/);
    await expectUnauthorized(await api("/platform/me", { key: org.apiKey.slice(0, -1) }), /malformed/);
    await expectUnauthorized(await api("/platform/me", { key: "hello" }), /malformed/);
  });

  it("401 for an unknown key id (well-formed key never minted)", async () => {
    const forged = org.apiKey.slice(0, 11) + "ZZZZZZZZZZZZZZZZ" + org.apiKey.slice(27);
    expect(forged).toHaveLength(org.apiKey.length);
    await expectUnauthorized(await api("/platform/me", { key: forged }), /not valid/);
  });

  it("401 for the right key id with a wrong secret", async () => {
    const last = org.apiKey.at(-1) === "a" ? "b" : "a";
    await expectUnauthorized(await api("/platform/me", { key: org.apiKey.slice(0, -1) + last }), /not valid/);
  });

  it("401 for a key of another environment", async () => {
    await expectUnauthorized(await api("/platform/me", { key: org.apiKey.replace("svc_test_", "svc_live_") }), /not valid/);
  });

  it("401 after revocation, while other keys keep working", async () => {
    const other = await mintKey(org.orgId, ["org:read"]);
    expect((await api("/platform/me", { key: other.apiKey })).status).toBe(200);
    await operator("DELETE", `/platform/orgs/${org.orgId}/keys/${other.keyId}`);
    await expectUnauthorized(await api("/platform/me", { key: other.apiKey }), /revoked/);
    expect((await api("/platform/me", { key: org.apiKey })).status).toBe(200);
  });

  it("401 once the key has expired", async () => {
    const other = await mintKey(org.orgId, ["org:read"]);
    expect((await api("/platform/me", { key: other.apiKey })).status).toBe(200);
    // Expiry is chosen at minting (only future times are accepted); age the key by moving its expiry back.
    await env.DIRECTORY.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), other.keyId)
      .run();
    await expectUnauthorized(await api("/platform/me", { key: other.apiKey }), /expired/);
  });

  it("stores only a hash of the secret", async () => {
    const row = await env.DIRECTORY.prepare("SELECT * FROM api_keys WHERE id = ?").bind(org.keyId).first<Record<string, unknown>>();
    const secret = org.apiKey.slice(-32);
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("403 permission_denied naming the permission the route requires", async () => {
    const weak = await mintKey(org.orgId, ["sig:checks:read"]);
    const res = await api("/platform/me", { key: weak.apiKey });
    expect(res.status).toBe(403);
    const body = await problem(res);
    expect(body.code).toBe("permission_denied");
    expect(body.detail).toContain("org:read");
  });

  it("refuses session tokens with 401 on routes that do not take them", async () => {
    await expectUnauthorized(await api("/platform/me", { key: "svc_ses_abcdefghijklmnop" }), /Session tokens are accepted only/);
  });

  it("refuses API keys on dashboard-only routes with 403", async () => {
    const res = await api("/platform/org", { method: "PATCH", key: org.apiKey, json: { learning: false } });
    expect(res.status).toBe(403);
    const body = await problem(res);
    expect(body.code).toBe("permission_denied");
    expect(body.detail).toMatch(/dashboard users only/);
  });
});
