import { createLocalJWKSet, createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import type { Env } from "../env";
import { configOf } from "../config";

/** Spec part 8: dashboard JWTs are at most 8192 bytes. */
export const MAX_JWT_BYTES = 8192;

export interface DashboardClaims {
  sub: string;
  orgId: string;
  permissions: string[];
}

export class JwtRejected extends Error {}

// One key set per issuer and source, kept for the life of the isolate: the remote set fetches the JWKS
// once and only refetches for an unknown `kid` (rate-limited by jose's cooldown) or when its cache ages out.
const keySets = new Map<string, JWTVerifyGetKey>();
let jwksFetches = 0;

/** How many times this isolate has fetched a remote JWKS (observability, and proof of the cache in tests). */
export function jwksFetchCount(): number {
  return jwksFetches;
}

function keySetFor(env: Env): JWTVerifyGetKey {
  const { issuer, jwksUrl, jwksInline } = configOf(env).jwt;
  const source = jwksUrl ? `url:${jwksUrl}` : `inline:${JSON.stringify(jwksInline)}`;
  const cacheKey = `${issuer}|${source}`;
  let keys = keySets.get(cacheKey);
  if (!keys) {
    if (jwksUrl) {
      keys = createRemoteJWKSet(new URL(jwksUrl), {
        timeoutDuration: 5000,
        cacheMaxAge: 10 * 60_000,
        [customFetch]: (url, init) => {
          jwksFetches++;
          return fetch(url, init);
        },
      });
    } else if (jwksInline) {
      keys = createLocalJWKSet(jwksInline as unknown as Parameters<typeof createLocalJWKSet>[0]);
    } else {
      throw new JwtRejected("Dashboard tokens are not configured on this service.");
    }
    keySets.set(cacheKey, keys);
  }
  return keys;
}

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * Verifies a dashboard token: RS256 only, issuer, audience (`aud` containing JWT_AUDIENCE, or a
 * `client_id` claim equal to it, as some identity providers issue access tokens), expiry, and the
 * claims we need. Throws JwtRejected with a caller-safe reason.
 */
export async function verifyDashboardJwt(env: Env, token: string): Promise<DashboardClaims> {
  if (new TextEncoder().encode(token).byteLength > MAX_JWT_BYTES) {
    throw new JwtRejected(`The token is larger than ${MAX_JWT_BYTES} bytes.`);
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySetFor(env), {
      algorithms: ["RS256"],
      issuer: configOf(env).jwt.issuer,
      requiredClaims: ["exp", "sub"],
    }));
  } catch (err) {
    if (err instanceof JwtRejected) throw err;
    const code = (err as { code?: string }).code;
    throw new JwtRejected(code === "ERR_JWT_EXPIRED" ? "The token has expired." : "The token is invalid.");
  }
  const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const audience = configOf(env).jwt.audience;
  if (!aud.includes(audience) && payload.client_id !== audience) {
    throw new JwtRejected("The token was issued for another audience.");
  }
  const orgId = payload.org_id;
  if (typeof orgId !== "string" || orgId.length === 0) throw new JwtRejected("The token has no org_id claim.");
  const permissions = payload.permissions ?? [];
  if (!Array.isArray(permissions) || !permissions.every((p) => typeof p === "string")) {
    throw new JwtRejected("The token's permissions claim is not a list of strings.");
  }
  return { sub: payload.sub!, orgId, permissions };
}
