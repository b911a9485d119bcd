/**
 * Client session tokens: `svc_ses_<opaque>`, the opaque part fixed-length base62 like an API key's:
 *
 *   [version 1][region hint 1][session id 16][secret 32]   = 50 characters
 *
 * The session id is public (`ses_<id>`, used to revoke it); the secret is stored only as a hash. The region
 * hint says which region's database holds the session, so a token is looked up where it lives without a
 * directory entry; the other regions are asked when it misses (the organisation may have moved since).
 *
 * A session allows exactly one streamed check, whose job id is fixed at minting (`chk_ses_<id>`), so the
 * integrator's server knows where to read the result before the phone has even opened the page.
 */
import { KEY_VERSION, SESSION_TOKEN_PREFIX, hashSecret, randomBase62 } from "./api-key";

export { SESSION_TOKEN_PREFIX };
export const SESSION_ID_LENGTH = 16;
const SECRET_LENGTH = 32;
const OPAQUE_LENGTH = 2 + SESSION_ID_LENGTH + SECRET_LENGTH;
const TOKEN_PATTERN = new RegExp(`^svc_ses_([0-9A-Za-z]{${OPAQUE_LENGTH}})$`);
const SESSION_ID_PATTERN = new RegExp(`^ses_([0-9A-Za-z]{${SESSION_ID_LENGTH}})$`);

const REGION_HINTS: Record<string, string> = { us: "u", eu: "e" };
const HINT_REGIONS: Record<string, string> = { u: "us", e: "eu" };

/** Default and bounds of a session's lifetime in seconds (SessionCreate.expires_in). */
export const SESSION_DEFAULT_TTL_S = 15 * 60;
export const SESSION_MIN_TTL_S = 60;
export const SESSION_MAX_TTL_S = 60 * 60;

export interface MintedSession {
  /** The full token, shown once. */
  token: string;
  /** The 16-character id inside the token. */
  id: string;
  secretHash: string;
}

export interface ParsedSessionToken {
  id: string;
  regionHint: string | null;
  secret: string;
}

export async function mintSessionToken(region: string): Promise<MintedSession> {
  const id = randomBase62(SESSION_ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  const token = `${SESSION_TOKEN_PREFIX}${KEY_VERSION}${REGION_HINTS[region] ?? "0"}${id}${secret}`;
  return { token, id, secretHash: await hashSecret(secret) };
}

/** Null for anything that is not a well-formed session token of a version we issue. */
export function parseSessionToken(token: string): ParsedSessionToken | null {
  const m = TOKEN_PATTERN.exec(token);
  if (!m || m[1][0] !== KEY_VERSION) return null;
  const opaque = m[1];
  return {
    regionHint: HINT_REGIONS[opaque[1]] ?? null,
    id: opaque.slice(2, 2 + SESSION_ID_LENGTH),
    secret: opaque.slice(2 + SESSION_ID_LENGTH),
  };
}

/** The public session id (`ses_<id>`). */
export function publicSessionId(id: string): string {
  return `ses_${id}`;
}

/** The stored id of a public session id, or null when it is not one (a path id that names nothing). */
export function sessionIdOf(publicId: string): string | null {
  return SESSION_ID_PATTERN.exec(publicId)?.[1] ?? null;
}

/** The job id of the one check a session may make. */
export function sessionJobId(id: string): string {
  return `chk_ses_${id}`;
}

export type SessionState = "active" | "expired" | "revoked";

export function sessionState(s: { expiresAt: string; revokedAt: string | null }, now = Date.now()): SessionState {
  if (s.revokedAt) return "revoked";
  return Date.parse(s.expiresAt) <= now ? "expired" : "active";
}
