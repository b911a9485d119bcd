import { ProblemError, fieldName } from "./problem";

/**
 * Opaque, tamper-evident list cursors. A cursor carries the name of the route that issued it and the
 * position after the last item returned, signed with HMAC-SHA256 under a key derived (HKDF) from the
 * cursor secret: Config.cursorSecret, which is CURSOR_SECRET when set, else OPERATOR_TOKEN, so no extra
 * secret is needed to run the service.
 *
 * A position is whatever the route needs to resume (for newest-first lists, typically the
 * created_at and id of the last item returned).
 */

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** One HMAC key per secret, cached for the isolate. */
function cursorKey(secret: string): Promise<CryptoKey> {
  if (!secret) throw new Error("cursor key: the cursor secret is empty");
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: encoder.encode("countersign"), info: encoder.encode("list cursor v1") },
        base,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign", "verify"],
      );
    })();
    keys.set(secret, key);
  }
  return key;
}

function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
    return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

function invalidCursor(detail: string): ProblemError {
  const field = fieldName("query", "cursor");
  return new ProblemError("invalid_cursor", `${field}: ${detail}`, { extensions: { errors: [{ field, message: detail }] } });
}

/** Issues a cursor for `route` (a stable name such as "GET /sig/checks?view=items") at `position`. */
export async function encodeCursor(secret: string, route: string, position: unknown): Promise<string> {
  const payload = encoder.encode(JSON.stringify({ r: route, p: position }));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await cursorKey(secret), payload));
  return `${toBase64Url(payload)}.${toBase64Url(mac)}`;
}

/**
 * The position of a cursor that `route` issued. A forged or altered cursor, or one issued by another
 * route, is a 400 invalid_cursor naming `cursor`.
 */
export async function decodeCursor<P = unknown>(secret: string, route: string, cursor: string): Promise<P> {
  // `?cursor=` is not the first page: no route issues an empty cursor (the last page's is null).
  if (cursor === "") throw invalidCursor("is empty: pass a next_cursor this route returned, or omit cursor for the first page");
  const [payloadPart, macPart, extra] = cursor.split(".");
  const payload = payloadPart !== undefined ? fromBase64Url(payloadPart) : null;
  const mac = macPart !== undefined ? fromBase64Url(macPart) : null;
  if (extra !== undefined || !payload || !mac || cursor.length > 4096) throw invalidCursor("is not a cursor issued by this route");
  const valid = await crypto.subtle.verify("HMAC", await cursorKey(secret), mac, payload);
  if (!valid) throw invalidCursor("is not a cursor issued by this route");
  let decoded: { r?: unknown; p?: unknown };
  try {
    decoded = JSON.parse(new TextDecoder().decode(payload)) as { r?: unknown; p?: unknown };
  } catch {
    throw invalidCursor("is not a cursor issued by this route");
  }
  if (decoded.r !== route) throw invalidCursor("was issued by another route");
  return decoded.p as P;
}
