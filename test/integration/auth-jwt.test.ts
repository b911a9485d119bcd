import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { outsideRequests } from "../helpers/outside";
import { dashboardToken, newSigningKey, signingKey } from "../helpers/jwt";
import { api, createOrg } from "../helpers/tenant";
import { jwksFetchCount } from "../../src/http/jwt";
import { SignJWT } from "jose";

async function problem(res: Response) {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string };
}

async function expectUnauthorized(res: Response, detail: RegExp) {
  expect(res.status).toBe(401);
  const body = await problem(res);
  expect(body.code).toBe("unauthorized");
  expect(body.detail).toMatch(detail);
}

describe("dashboard JWTs (RS256 against the JWKS served by a local HTTP server)", () => {
  let orgId: string;
  beforeAll(async () => {
    ({ orgId } = await createOrg({ permissions: ["org:read"] }));
    await signingKey();
  });

  it("accepts a valid token: the permissions claim sets the permissions, the actor is user:<sub>", async () => {
    const token = await dashboardToken({ orgId, sub: "alice", permissions: ["org:read", "sig:settings:manage", "not:ours"] });
    const res = await api("/platform/me", { key: token });
    expect(res.status).toBe(200);
    const me = (await res.json()) as { actor: string; credential: string; permissions: string[]; org: { org_id: string } };
    expect(me).toMatchObject({ actor: "user:alice", credential: "user", permissions: ["org:read", "sig:settings:manage"] });
    expect(me.org.org_id).toBe(orgId);
  });

  it("fetches the key set once per isolate", async () => {
    expect((await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["org:read"] }) })).status).toBe(200);
    const before = jwksFetchCount();
    expect(before).toBe(1);
    for (let i = 0; i < 5; i++) {
      expect((await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["org:read"] }) })).status).toBe(200);
    }
    expect(jwksFetchCount()).toBe(before);
    expect((await outsideRequests("/jwks.json")).length).toBeGreaterThanOrEqual(1);
  });

  it("accepts client_id equal to the audience when aud is absent", async () => {
    const token = await dashboardToken({ orgId, permissions: ["org:read"], audience: null, clientId: env.JWT_AUDIENCE });
    expect((await api("/platform/me", { key: token })).status).toBe(200);
  });

  it("401 for an expired token", async () => {
    await expectUnauthorized(
      await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["org:read"], expiresIn: -120 }) }),
      /expired/,
    );
  });

  it("401 for a wrong audience (and a wrong client_id)", async () => {
    await expectUnauthorized(
      await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["org:read"], audience: "someone-else" }) }),
      /audience/,
    );
    await expectUnauthorized(
      await api("/platform/me", {
        key: await dashboardToken({ orgId, permissions: ["org:read"], audience: null, clientId: "other-client" }),
      }),
      /audience/,
    );
  });

  it("401 for a wrong issuer", async () => {
    await expectUnauthorized(
      await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["org:read"], issuer: "https://evil.example/" }) }),
      /invalid/,
    );
  });

  it("401 for a token over 8192 bytes, even if correctly signed", async () => {
    const token = await dashboardToken({ orgId, permissions: ["org:read"], extra: { pad: "x".repeat(8200) } });
    expect(token.length).toBeGreaterThan(8192);
    await expectUnauthorized(await api("/platform/me", { key: token }), /8192 bytes/);
    // The same claims without the padding pass, so the size is what was refused.
    const small = await dashboardToken({ orgId, permissions: ["org:read"], extra: { pad: "x".repeat(5000) } });
    expect(small.length).toBeLessThanOrEqual(8192);
    expect((await api("/platform/me", { key: small })).status).toBe(200);
  });

  it("401 for a bad signature: a key the identity provider never published, under a published kid", async () => {
    const published = await signingKey();
    const rogue = await newSigningKey(false);
    const token = await dashboardToken({ orgId, permissions: ["org:read"], key: { kid: published.kid, privateKey: rogue.privateKey } });
    await expectUnauthorized(await api("/platform/me", { key: token }), /invalid/);
  });

  it("401 for a tampered payload", async () => {
    const token = await dashboardToken({ orgId, permissions: ["org:read"] });
    const [h, , s] = token.split(".");
    const forged = btoa(
      JSON.stringify({
        sub: "mallory",
        org_id: orgId,
        permissions: ["org:read", "org:children:access"],
        iss: env.JWT_ISSUER,
        aud: env.JWT_AUDIENCE,
        exp: 9999999999,
      }),
    )
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    await expectUnauthorized(await api("/platform/me", { key: `${h}.${forged}.${s}` }), /invalid/);
  });

  it("401 for a token not signed with RS256 (HS256 with a guessable secret, or alg none)", async () => {
    const { kid } = await signingKey();
    const now = Math.floor(Date.now() / 1000);
    const hs = await new SignJWT({ org_id: orgId, permissions: ["org:read"] })
      .setProtectedHeader({ alg: "HS256", kid })
      .setSubject("mallory")
      .setIssuer(env.JWT_ISSUER)
      .setAudience(env.JWT_AUDIENCE)
      .setExpirationTime(now + 600)
      .sign(new TextEncoder().encode("secret"));
    await expectUnauthorized(await api("/platform/me", { key: hs }), /invalid/);
    const b64 = (o: object) => btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "m", org_id: orgId, permissions: ["org:read"], iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, exp: now + 600 })}.`;
    await expectUnauthorized(await api("/platform/me", { key: none }), /invalid/);
  });

  it("403 tenant_not_provisioned for an org_id that is not a tenant", async () => {
    const res = await api("/platform/me", {
      key: await dashboardToken({ orgId: "org_01JD0000000000000000000000", permissions: ["org:read"] }),
    });
    expect(res.status).toBe(403);
    expect((await problem(res)).code).toBe("tenant_not_provisioned");
  });

  it("401 for a token without org_id", async () => {
    await expectUnauthorized(await api("/platform/me", { key: await dashboardToken({ permissions: ["org:read"] }) }), /org_id/);
  });

  it("403 permission_denied when the role lacks the route's permission", async () => {
    const res = await api("/platform/me", { key: await dashboardToken({ orgId, permissions: ["sig:checks:read"] }) });
    expect(res.status).toBe(403);
    expect((await problem(res)).detail).toContain("org:read");
  });

  it("lets dashboard users change settings, audited as user:<sub>", async () => {
    const token = await dashboardToken({ orgId, sub: "bob", permissions: ["sig:settings:manage"] });
    const res = await api("/platform/org", { method: "PATCH", key: token, json: { learning: false, inbox_ttl: 3600 } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ org_id: orgId, learning: false, inbox_ttl: 3600 });
    const row = await env.DB_US.prepare("SELECT actor, action FROM audit_log WHERE org_id = ? AND action = 'org.update'")
      .bind(orgId)
      .first();
    expect(row).toEqual({ actor: "user:bob", action: "org.update" });
  });
});
