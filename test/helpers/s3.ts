/**
 * An S3 client from the AWS SDK (@aws-sdk/client-s3), pointed at the Worker's local S3 endpoint through
 * the Worker's own fetch. The SDK signs every request itself (Signature V4); the only part supplied
 * here is the transport, since tests reach the Worker through exports.default.fetch, not the network
 * (or through another fetcher, to run the Worker with an altered env).
 */
import { exports } from "cloudflare:workers";
import { S3Client } from "@aws-sdk/client-s3";
import { BASE, api } from "./tenant";

export const S3_ENDPOINT = `${BASE}/s3`;

/** The SDK's HttpRequest, as far as a transport needs it. */
interface SdkHttpRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: unknown;
}

function strictEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function queryString(q: SdkHttpRequest["query"]): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q ?? {})) {
    if (v === null || v === undefined) parts.push(strictEncode(k));
    else for (const one of Array.isArray(v) ? v : [v]) parts.push(`${strictEncode(k)}=${strictEncode(one)}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

/** A request handler for the SDK that delivers to `fetcher` (the Worker's fetch unless a test gives another env). */
function transportVia(fetcher: Fetcher) {
  return {
    metadata: { handlerProtocol: "http/1.1" },
    async handle(request: SdkHttpRequest) {
      const url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ""}${request.path}${queryString(request.query)}`;
      const headers = new Headers(request.headers);
      headers.delete("host");
      const method = request.method.toUpperCase();
      let body = request.body as BodyInit | undefined;
      if (body instanceof Uint8Array) body = body.slice();
      const res = await fetcher(url, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body });
      const out: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        out[k] = v;
      });
      return {
        response: {
          statusCode: res.status,
          reason: res.statusText,
          headers: out,
          body: res.body ?? new ReadableStream({ start: (c) => c.close() }),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
    destroy() {},
  };
}

export const workerTransport = transportVia((url, init) => exports.default.fetch(url, init));

/** `endpoint`: the /s3 path by default; the bare origin (as POST /sig/bucket-keys gives it) works as well. */
export function s3Client(accessKeyId: string, secretAccessKey: string, endpoint = S3_ENDPOINT, fetcher?: Fetcher): S3Client {
  return new S3Client({
    endpoint,
    region: "auto",
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestHandler: (fetcher ? transportVia(fetcher) : workerTransport) as never,
  });
}

export interface IssuedBucketKey {
  access_key_id: string;
  secret_access_key: string;
  endpoint_url: string;
  bucket: string;
  prefix: string;
  region: string;
}

export async function issueBucketKey(apiKey: string): Promise<IssuedBucketKey> {
  const res = await api("/sig/bucket-keys", { method: "POST", key: apiKey });
  if (res.status !== 201) throw new Error(`POST /sig/bucket-keys -> ${res.status}: ${await res.text()}`);
  return (await res.json()) as IssuedBucketKey;
}
