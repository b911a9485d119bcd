/**
 * Scripting the local outside-world server (test/outside/server.mjs) from a test:
 *
 *   const path = uniquePath("doc.png");
 *   await registerOutside(path, { body_base64: png, headers: { "content-type": "image/png" } });
 *   const url = outsideUrl(path);          // hand it to the Worker
 *   const seen = await outsideRequests(path);
 */
import { env } from "cloudflare:workers";
import { until } from "./wait";

export interface OutsideChunk {
  data?: string;
  data_base64?: string;
  /** Filler bytes ("a") instead of data. */
  size?: number;
  delay_ms?: number;
}

export interface OutsideResponse {
  method?: string;
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  body_base64?: string;
  json?: unknown;
  /** Answer with a redirect (302 unless status is given) to this Location. */
  redirect?: string;
  /** Wait this long before sending anything. */
  delay_ms?: number;
  /** Stream the body in pieces. */
  chunks?: OutsideChunk[];
  /** After the chunks, hold the connection open without finishing the body (for stall_ms, default 180 s). */
  stall?: boolean;
  stall_ms?: number;
  /** Serve this many times, then 404. */
  times?: number;
}

export interface OutsideRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[]>;
  body_bytes: number;
  at: number;
}

export function outsideUrl(path: string): string {
  return env.TEST_OUTSIDE_URL + path;
}

/** A path no other test uses (test files share the server and run in parallel). */
export function uniquePath(name: string): string {
  return `/t/${crypto.randomUUID()}/${name}`;
}

async function control(method: string, path: string, json?: unknown): Promise<Response> {
  const res = await fetch(env.TEST_OUTSIDE_URL + path, {
    method,
    headers: json === undefined ? {} : { "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  if (!res.ok) throw new Error(`outside server ${method} ${path} -> ${res.status}: ${await res.text()}`);
  return res;
}

export async function registerOutside(path: string, response: OutsideResponse): Promise<void> {
  await control("POST", "/__register", { path, ...response });
}

export async function unregisterOutside(path: string): Promise<void> {
  await control("POST", "/__unregister", { path });
}

export async function outsideRequests(path: string): Promise<OutsideRequest[]> {
  return (await control("GET", `/__requests?path=${encodeURIComponent(path)}`)).json();
}

/** Adds a public key to the JWKS the service verifies dashboard tokens against (JWKS_URL). */
export async function publishJwk(jwk: object): Promise<void> {
  await control("POST", "/__jwks", { jwk });
}

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  version: string | null;
  body: { id: string; type: string; timestamp: string; version: string; org_id: string; data: Record<string, unknown> } | null;
  /** One entry per secret the receiver was given: did the standardwebhooks library accept the message with it. */
  verified: boolean[];
  status: number;
  at: number;
}

/** Makes `path` a webhook receiver on the outside server (verifying with the standardwebhooks library). */
export async function registerReceiver(
  path: string,
  opts: { secrets: string[]; statuses?: number[]; body?: string; delay_ms?: number },
): Promise<void> {
  await control("POST", "/__webhooks/register", { path, ...opts });
}

export async function receivedWebhooks(path: string): Promise<ReceivedWebhook[]> {
  return (await control("GET", `/__webhooks/received?path=${encodeURIComponent(path)}`)).json();
}

/** Polls the receiver until `done` holds for what it received (or the timeout passes). */
export async function waitForWebhooks(path: string, done: (got: ReceivedWebhook[]) => boolean): Promise<ReceivedWebhook[]> {
  return until(() => receivedWebhooks(path), done, { what: `receiver ${path}'s condition`, pauseMs: 100 });
}
