/**
 * Dashboard tokens for tests. The first call generates an RSA key pair for this test file and publishes
 * its public key on the outside server's JWKS (JWKS_URL), so the service verifies the token the way it
 * would verify an identity provider's: by fetching the key set over HTTP.
 *
 *   const token = await dashboardToken({ orgId, permissions: ["org:read"] });
 *   await api("/platform/me", { key: token });
 */
import { env } from "cloudflare:workers";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from "jose";
import type { Permission } from "../../src/domain/tenancy";
import { publishJwk } from "./outside";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

let published: Promise<SigningKey> | undefined;

/** A fresh RS256 key pair; `publish` puts its public half on the JWKS the service trusts. */
export async function newSigningKey(publish = true): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `test-${crypto.randomUUID()}`;
  if (publish) await publishJwk({ ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" });
  return { kid, privateKey };
}

/** This test file's published signing key (created once). */
export function signingKey(): Promise<SigningKey> {
  published ??= newSigningKey(true);
  return published;
}

export interface TokenOptions {
  orgId?: string;
  permissions?: Permission[] | string[];
  sub?: string;
  /** Default env.JWT_AUDIENCE; null leaves `aud` out. */
  audience?: string | null;
  clientId?: string;
  issuer?: string;
  /** Seconds from now; negative for an expired token. Default 600. */
  expiresIn?: number;
  /** Extra claims (e.g. padding for size tests). */
  extra?: Record<string, unknown>;
  /** Sign with this key instead of the published one. */
  key?: SigningKey;
}

export async function dashboardToken(opts: TokenOptions = {}): Promise<string> {
  const key = opts.key ?? (await signingKey());
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { ...opts.extra };
  if (opts.orgId !== undefined) claims.org_id = opts.orgId;
  claims.permissions = opts.permissions ?? [];
  if (opts.clientId !== undefined) claims.client_id = opts.clientId;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "JWT" })
    .setSubject(opts.sub ?? "user-1")
    .setIssuer(opts.issuer ?? env.JWT_ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + (opts.expiresIn ?? 600));
  const audience = opts.audience === undefined ? env.JWT_AUDIENCE : opts.audience;
  if (audience !== null) jwt.setAudience(audience);
  return jwt.sign(key.privateKey);
}
