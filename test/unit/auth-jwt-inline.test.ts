import { env } from "cloudflare:workers";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { JwtRejected, verifyDashboardJwt } from "../../src/http/jwt";

describe("dashboard JWTs against an inline JWKS (local use)", async () => {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "inline-1", alg: "RS256" }] };
  const inlineEnv: Env = { ...env, JWKS_URL: "", JWKS_INLINE: JSON.stringify(jwks) };
  const sign = (claims: Record<string, unknown>, exp = 600) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "inline-1" })
      .setSubject("carol")
      .setIssuer(env.JWT_ISSUER)
      .setAudience(env.JWT_AUDIENCE)
      .setExpirationTime(Math.floor(Date.now() / 1000) + exp)
      .sign(privateKey);

  it("verifies without any network", async () => {
    const claims = await verifyDashboardJwt(inlineEnv, await sign({ org_id: "org_x", permissions: ["org:read"] }));
    expect(claims).toEqual({ sub: "carol", orgId: "org_x", permissions: ["org:read"] });
  });

  it("rejects an expired token and a malformed permissions claim", async () => {
    await expect(verifyDashboardJwt(inlineEnv, await sign({ org_id: "org_x" }, -60))).rejects.toThrow(/expired/);
    await expect(verifyDashboardJwt(inlineEnv, await sign({ org_id: "org_x", permissions: "org:read" }))).rejects.toThrow(JwtRejected);
  });

  it("refuses every token when no key set is configured", async () => {
    const none: Env = { ...env, JWKS_URL: "", JWKS_INLINE: "", JWT_ISSUER: "https://unconfigured.example/" };
    await expect(verifyDashboardJwt(none, await sign({ org_id: "org_x" }))).rejects.toThrow(/not configured/);
  });
});
