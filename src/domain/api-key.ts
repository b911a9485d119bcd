/**
 * API keys: `svc_<env>_<opaque>`. The opaque part is fixed-length base62:
 *
 *   [version 1][region hint 1][key id 16][secret 32]   = 50 characters
 *
 * The key id is what the directory is searched by; the secret is only ever stored as a hash. The region
 * hint names the home region at minting time; the directory stays authoritative (an organisation may
 * move), so the hint is never used to decide where a request is served.
 */

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const KEY_VERSION = "1";
export const KEY_ID_LENGTH = 16;
export const SECRET_LENGTH = 32;
const OPAQUE_LENGTH = 2 + KEY_ID_LENGTH + SECRET_LENGTH;
/** Characters of the opaque part shown in listings: enough to recognise a key, far too few to use it. */
const DISPLAY_CHARS = 6;

const REGION_HINTS: Record<string, string> = { us: "u", eu: "e" };
const HINT_REGIONS: Record<string, string> = { u: "us", e: "eu" };

export const SESSION_TOKEN_PREFIX = "svc_ses_";
const KEY_PATTERN = new RegExp(`^svc_([a-z]{2,16})_([0-9A-Za-z]{${OPAQUE_LENGTH}})$`);
const KEY_ID_PATTERN = new RegExp(`^[0-9A-Za-z]{${KEY_ID_LENGTH}}$`);

export interface ParsedApiKey {
  env: string;
  version: string;
  regionHint: string | null;
  keyId: string;
  secret: string;
}

export interface MintedApiKey {
  /** The full key, shown once. */
  key: string;
  keyId: string;
  prefix: string;
  secretHash: string;
}

/** Uniform random base62 (rejection sampling: 248 = 4 * 62 keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function isKeyId(s: string): boolean {
  return KEY_ID_PATTERN.test(s);
}

export async function mintApiKey(env: string, region: string): Promise<MintedApiKey> {
  const keyId = randomBase62(KEY_ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  const key = `svc_${env}_${KEY_VERSION}${REGION_HINTS[region] ?? "0"}${keyId}${secret}`;
  return { key, keyId, prefix: displayPrefix(key), secretHash: await hashSecret(secret) };
}

/** Null for anything that is not a well-formed key of a version we issue. */
export function parseApiKey(token: string): ParsedApiKey | null {
  const m = KEY_PATTERN.exec(token);
  if (!m || m[1] === "ses") return null;
  const opaque = m[2];
  if (opaque[0] !== KEY_VERSION) return null;
  return {
    env: m[1],
    version: opaque[0],
    regionHint: HINT_REGIONS[opaque[1]] ?? null,
    keyId: opaque.slice(2, 2 + KEY_ID_LENGTH),
    secret: opaque.slice(2 + KEY_ID_LENGTH),
  };
}

export function displayPrefix(key: string): string {
  const cut = key.lastIndexOf("_") + 1;
  return key.slice(0, cut + DISPLAY_CHARS);
}

/**
 * SHA-256 rather than a slow password hash: the secret is 32 uniformly random base62 characters (~190 bits),
 * so brute force or dictionaries are hopeless even against a fast hash, and every request can afford it.
 */
export async function hashSecret(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two strings without an early exit, so timing does not reveal how much matched. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

export async function secretMatches(secret: string, storedHash: string): Promise<boolean> {
  return constantTimeEqual(await hashSecret(secret), storedHash);
}
