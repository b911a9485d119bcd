import type { MiddlewareHandler } from "hono";
import type { Env } from "../env";
import { configOf } from "../config";
import { SESSION_TOKEN_PREFIX, parseApiKey, secretMatches } from "../domain/api-key";
import { directory } from "../storage/directory";
import { apiKeyRecord } from "../storage/directory-cache";
import type { AppEnv } from "./context";
import { PERMISSIONS, type Caller, type Permission } from "../domain/tenancy";
import { findSession } from "../services/sessions";
import { publicSessionId } from "../domain/session";
import { JwtRejected, looksLikeJwt, verifyDashboardJwt } from "./jwt";
import { ProblemError } from "./problem";
import type { RouteRules } from "./route";

const KNOWN = new Set<string>(PERMISSIONS);
/** Compared against when the key id is unknown; no secret hashes to 64 zeros. */
const UNKNOWN_KEY_HASH = "0".repeat(64);

function unauthorized(detail: string): ProblemError {
  return new ProblemError("unauthorized", detail, { headers: { "WWW-Authenticate": 'Bearer realm="countersign"' } });
}

/** The bearer token of the request, or null when the header is missing or not a bearer credential. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The subprotocol a browser names to send a session token on the live WebSocket (spec 4.4, 5.3). */
export const SESSION_SUBPROTOCOL = "service.session";

/**
 * A session token sent by a browser as `Sec-WebSocket-Protocol: service.session, <token>` on a WebSocket
 * upgrade (browsers cannot set Authorization there), or null.
 */
export function subprotocolToken(upgrade: string | undefined, protocols: string | undefined): string | null {
  if (upgrade?.toLowerCase() !== "websocket" || !protocols) return null;
  const names = protocols.split(",").map((p) => p.trim());
  const at = names.indexOf(SESSION_SUBPROTOCOL);
  const token = at >= 0 ? names[at + 1] : undefined;
  return token?.startsWith(SESSION_TOKEN_PREFIX) ? token : null;
}

/**
 * Establishes c.var.caller from the Authorization header: an API key, a dashboard JWT, or (on routes
 * that list "session") a session token. Every failure to prove identity is 401 `unauthorized`; a proven
 * credential of a kind the route does not take is 403 `permission_denied`.
 */
export function authenticate(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token =
      bearerToken(c.req.header("Authorization")) ??
      (rules.credentials.includes("session") ? subprotocolToken(c.req.header("Upgrade"), c.req.header("Sec-WebSocket-Protocol")) : null);
    if (!token) throw unauthorized("This route requires Authorization: Bearer <API key or dashboard token>.");

    let caller: Caller;
    if (token.startsWith(SESSION_TOKEN_PREFIX)) {
      // A session token on a route that does not take sessions is refused as an unusable credential (401),
      // like any other credential that cannot authenticate this request.
      if (!rules.credentials.includes("session")) {
        throw unauthorized("Session tokens are accepted only on GET /sig/live and on a streamed POST /sig/checks.");
      }
      caller = await authenticateSession(c.env, token);
    } else if (token.startsWith("svc_")) {
      caller = await authenticateApiKey(c.env, token, mayUseDirectoryCache(c.req.method, c.req.path));
    } else if (looksLikeJwt(token)) {
      caller = await authenticateDashboardUser(c.env, token);
    } else {
      throw unauthorized("The credential is malformed: expected an API key (svc_...) or a dashboard token.");
    }

    if (!rules.credentials.includes(caller.kind)) {
      throw new ProblemError(
        "permission_denied",
        caller.kind === "api_key" && rules.credentials.includes("user")
          ? "This route is for dashboard users only; API keys are refused."
          : "This route does not accept this kind of credential.",
      );
    }
    c.set("caller", caller);
    return next();
  };
}

/**
 * Reads of the verification API (GET/HEAD under /sig/) may use the isolate's cached directory records
 * (storage/directory-cache.ts). Every other request reads the directory itself, so a write never acts on
 * a revoked key or a stale organisation, and the platform routes (keys, billing, settings) always see
 * the directory as it is.
 */
export function mayUseDirectoryCache(method: string, path: string): boolean {
  return (method === "GET" || method === "HEAD") && path.startsWith("/sig/");
}

async function authenticateApiKey(env: Env, token: string, mayUseCache: boolean): Promise<Caller> {
  const parsed = parseApiKey(token);
  if (!parsed) throw unauthorized("The API key is malformed.");
  // A key of another environment (svc_live_ sent to a test service) is simply not one of ours.
  if (parsed.env !== configOf(env).apiKeyEnv) throw unauthorized("The API key is not valid.");
  const key = await apiKeyRecord(directory(env.DIRECTORY), parsed.keyId, mayUseCache);
  // Unknown id and wrong secret read the same, and both hash the secret, so neither the answer nor its
  // timing reveals which key ids exist.
  const matches = await secretMatches(parsed.secret, key?.secretHash ?? UNKNOWN_KEY_HASH);
  if (!key || !matches) throw unauthorized("The API key is not valid.");
  if (key.revokedAt) throw unauthorized("The API key has been revoked.");
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) throw unauthorized("The API key has expired.");
  return {
    kind: "api_key",
    actor: `key:${key.keyId}`,
    orgId: key.orgId,
    permissions: new Set(key.permissions),
    keyId: key.keyId,
  };
}

async function authenticateSession(env: Env, token: string): Promise<Caller> {
  const found = await findSession(env, token);
  if (!found.ok) throw unauthorized(found.detail);
  const { row } = found;
  return {
    kind: "session",
    actor: `session:${publicSessionId(row.sessionId)}`,
    orgId: row.orgId,
    // A session does one thing: capture and check for its subject.
    permissions: new Set<Permission>(["sig:checks:create"]),
    sessionId: row.sessionId,
    subjectReference: row.subjectReference,
  };
}

async function authenticateDashboardUser(env: Env, token: string): Promise<Caller> {
  let claims;
  try {
    claims = await verifyDashboardJwt(env, token);
  } catch (err) {
    if (err instanceof JwtRejected) throw unauthorized(`Dashboard token refused: ${err.message}`);
    throw err;
  }
  const org = await directory(env.DIRECTORY).getOrg(claims.orgId);
  if (!org) {
    throw new ProblemError("tenant_not_provisioned", `The organisation ${claims.orgId} of this token is not a provisioned tenant.`);
  }
  // Permissions we do not know (e.g. of another product) are ignored rather than refused.
  const permissions = new Set(claims.permissions.filter((p): p is Permission => KNOWN.has(p)));
  return { kind: "user", actor: `user:${claims.sub}`, orgId: org.id, permissions, userId: claims.sub };
}
