/**
 * AWS Signature Version 4 for the local S3 endpoint: parsing a request's signature (header or presigned
 * query), recomputing it from the request and the key's secret, and the per-chunk signatures of
 * `aws-chunked` bodies. Pure: WebCrypto only, no bindings.
 *
 * The canonical request follows the S3 flavour of SigV4: the path is used as sent (encoded once, never
 * normalised), query parameters are decoded, strictly re-encoded (RFC 3986) and sorted, and the payload
 * hash is whatever the client put in x-amz-content-sha256 (a hex digest, UNSIGNED-PAYLOAD or a
 * STREAMING-* marker), which the endpoint then holds the body to.
 */

export const ALGORITHM = "AWS4-HMAC-SHA256";
export const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";
/** Signatures older or newer than this are refused (RequestTimeTooSkewed), as S3 does. */
export const MAX_SKEW_MS = 15 * 60 * 1000;

export interface SignedRequestParts {
  accessKeyId: string;
  /** YYYYMMDD of the credential scope. */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  /** The request time, `YYYYMMDDTHHMMSSZ`. */
  amzDate: string;
  payloadHash: string;
  /** Presigned URL: seconds it is valid for. */
  expires?: number;
  presigned: boolean;
}

export type ParseFailure = {
  error: "AccessDenied" | "AuthorizationHeaderMalformed" | "AuthorizationQueryParametersError";
  message: string;
};

const enc = new TextEncoder();

export function hex(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = "";
  for (const x of b) s += x.toString(16).padStart(2, "0");
  return s;
}

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", typeof data === "string" ? enc.encode(data) : data));
}

async function hmac(key: Uint8Array | string, data: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey(
    "raw",
    typeof key === "string" ? enc.encode(key) : key,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(data)));
}

export async function signingKey(secret: string, date: string, region: string, service: string): Promise<Uint8Array> {
  const kDate = await hmac(`AWS4${secret}`, date);
  const kRegion = await hmac(kDate, region);
  const kService = await hmac(kRegion, service);
  return hmac(kService, "aws4_request");
}

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters, upper-case hex. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The query's parameters, decoded, in order of appearance ("?uploads" gives ["uploads", ""]). */
export function queryParams(search: string): [string, string][] {
  const q = search.startsWith("?") ? search.slice(1) : search;
  if (q === "") return [];
  return q
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const i = pair.indexOf("=");
      return i < 0 ? [safeDecode(pair), ""] : [safeDecode(pair.slice(0, i)), safeDecode(pair.slice(i + 1))];
    });
}

function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/** Parses the signature of a request: the Authorization header, or a presigned URL's query. Null: unsigned. */
export function parseSignature(req: Request, url: URL): SignedRequestParts | ParseFailure | null {
  const auth = req.headers.get("Authorization");
  if (auth) {
    if (!auth.startsWith(`${ALGORITHM} `)) {
      return { error: "AuthorizationHeaderMalformed", message: `Only ${ALGORITHM} (Signature Version 4) is supported.` };
    }
    const fields = new Map<string, string>();
    for (const part of auth.slice(ALGORITHM.length + 1).split(",")) {
      const i = part.indexOf("=");
      if (i > 0) fields.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
    }
    const credential = fields.get("Credential"),
      signedHeaders = fields.get("SignedHeaders"),
      signature = fields.get("Signature");
    if (!credential || !signedHeaders || !signature) {
      return { error: "AuthorizationHeaderMalformed", message: "The Authorization header needs Credential, SignedHeaders and Signature." };
    }
    const scope = credential.split("/");
    if (scope.length !== 5 || scope[4] !== "aws4_request")
      return { error: "AuthorizationHeaderMalformed", message: "The credential scope is malformed." };
    const amzDate = req.headers.get("x-amz-date") ?? "";
    return {
      accessKeyId: scope[0],
      date: scope[1],
      region: scope[2],
      service: scope[3],
      signedHeaders: signedHeaders.split(";"),
      signature: signature.toLowerCase(),
      amzDate,
      payloadHash: req.headers.get("x-amz-content-sha256") ?? UNSIGNED_PAYLOAD,
      presigned: false,
    };
  }
  const params = new Map(queryParams(url.search));
  if (!params.has("X-Amz-Signature")) return null;
  if (params.get("X-Amz-Algorithm") !== ALGORITHM)
    return { error: "AuthorizationQueryParametersError", message: `X-Amz-Algorithm must be ${ALGORITHM}.` };
  const scope = (params.get("X-Amz-Credential") ?? "").split("/");
  const expires = Number(params.get("X-Amz-Expires") ?? "");
  if (scope.length !== 5 || scope[4] !== "aws4_request" || !Number.isInteger(expires) || expires < 1 || expires > 604800) {
    return { error: "AuthorizationQueryParametersError", message: "X-Amz-Credential or X-Amz-Expires is malformed." };
  }
  return {
    accessKeyId: scope[0],
    date: scope[1],
    region: scope[2],
    service: scope[3],
    signedHeaders: (params.get("X-Amz-SignedHeaders") ?? "host").split(";"),
    signature: (params.get("X-Amz-Signature") ?? "").toLowerCase(),
    amzDate: params.get("X-Amz-Date") ?? "",
    payloadHash: UNSIGNED_PAYLOAD,
    expires,
    presigned: true,
  };
}

/** Milliseconds since the epoch of an x-amz-date (`20240101T120000Z`), or NaN. */
export function amzDateMs(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!m) return Number.NaN;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}

function headerValue(req: Request, url: URL, name: string): string {
  const raw = name === "host" ? (req.headers.get("host") ?? url.host) : (req.headers.get(name) ?? "");
  return raw.trim().replace(/\s+/g, " ");
}

/** The string to sign and the expected signature of a request, given the key's secret. */
export async function expectedSignature(
  req: Request,
  url: URL,
  parts: SignedRequestParts,
  secret: string,
): Promise<{ signature: string; key: Uint8Array; scope: string }> {
  const params = queryParams(url.search).filter(([k]) => !(parts.presigned && k === "X-Amz-Signature"));
  const headers = [...parts.signedHeaders].sort();
  const canonical = [
    req.method.toUpperCase(),
    url.pathname || "/",
    canonicalQuery(params),
    headers.map((h) => `${h}:${headerValue(req, url, h)}\n`).join(""),
    headers.join(";"),
    parts.payloadHash,
  ].join("\n");
  const scope = `${parts.date}/${parts.region}/${parts.service}/aws4_request`;
  const stringToSign = [ALGORITHM, parts.amzDate, scope, await sha256Hex(canonical)].join("\n");
  const key = await signingKey(secret, parts.date, parts.region, parts.service);
  return { signature: hex(await hmac(key, stringToSign)), key, scope };
}

/** The signature of one chunk of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD body. */
export async function chunkSignature(
  key: Uint8Array,
  amzDate: string,
  scope: string,
  previous: string,
  chunk: Uint8Array,
): Promise<string> {
  const stringToSign = ["AWS4-HMAC-SHA256-PAYLOAD", amzDate, scope, previous, await sha256Hex(""), await sha256Hex(chunk)].join("\n");
  return hex(await hmac(key, stringToSign));
}

export function constantTimeEqualHex(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}
