/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): every message is signed with
 * HMAC-SHA256 over `<id>.<timestamp>.<body>` under the endpoint's secret, and the signature header
 * lists `v1,<base64>` for each secret in force, space separated. Right after a rotation both the new
 * and the previous secret sign (for 24 h), so a receiver still holding the old one keeps verifying.
 *
 * The headers are ours (`Service-Webhook-Id`, `Service-Webhook-Timestamp`, `Service-Signature`) but the
 * scheme is the standard one: a receiver maps them onto `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` and verifies with any Standard Webhooks library.
 */

export const SECRET_PREFIX = "whsec_";
/** How long the previous secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;

export const WEBHOOK_HEADERS = {
  id: "Service-Webhook-Id",
  timestamp: "Service-Webhook-Timestamp",
  signature: "Service-Signature",
} as const;

const encoder = new TextEncoder();

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/** The HMAC key bytes of a `whsec_` secret. */
export function secretKeyBytes(secret: string): Uint8Array {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("not a whsec_ secret");
  return fromBase64(secret.slice(SECRET_PREFIX.length));
}

/** One `v1,<base64>` signature of a message. */
export async function signOne(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secretKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

export interface EndpointSecrets {
  current: string;
  /** The secret before the last rotation, and until when it still signs. */
  previous?: { secret: string; expiresAt: number } | null;
}

/** The secrets that sign a message sent at `now`: the current one, and the previous while it lasts. */
export function secretsInForce(secrets: EndpointSecrets, now: number): string[] {
  const out = [secrets.current];
  if (secrets.previous && now < secrets.previous.expiresAt) out.push(secrets.previous.secret);
  return out;
}

/** The three signing headers of one attempt. `now` is epoch ms; the timestamp is whole seconds. */
export async function signingHeaders(secrets: EndpointSecrets, id: string, body: string, now: number): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  const signatures = await Promise.all(secretsInForce(secrets, now).map((s) => signOne(s, id, timestamp, body)));
  return {
    [WEBHOOK_HEADERS.id]: id,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [WEBHOOK_HEADERS.signature]: signatures.join(" "),
  };
}
