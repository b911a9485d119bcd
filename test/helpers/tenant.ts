/**
 * Test helper: organisations, API keys and authenticated calls, all through the Worker's own fetch and
 * the real platform routes (no direct database writes), so every test exercises the real pipeline.
 *
 *   const { orgId, apiKey } = await createOrg({ permissions: ["org:read"] });
 *   const res = await api("/sig/policies", { key: apiKey });
 *   const res2 = await api("/sig/policies/x", { method: "PUT", key: apiKey, json: { ... } });
 */
import { env, exports } from "cloudflare:workers";
import { PERMISSIONS, type BillingState, type Permission, type RegionName } from "../../src/domain/tenancy";
import { BUCKETS } from "../../durable-objects/tenant-gate";

/** The global address ({base_url}): requests are routed by the key's organisation. */
export const BASE = "https://api.countersign.localhost";
/** The regional addresses (REGION_HOSTS in wrangler.toml). */
export const REGION_BASE: Record<RegionName, string> = {
  us: "https://us.api.countersign.localhost",
  eu: "https://eu.api.countersign.localhost",
};
export const ALL_PERMISSIONS: Permission[] = [...PERMISSIONS];

export interface CreateOrgOptions {
  name?: string;
  region?: RegionName;
  parentId?: string;
  /** Default "active". */
  billing?: BillingState;
  /** Permissions of the API key minted with the organisation; default every permission. */
  permissions?: Permission[];
  learning?: boolean;
  allowHosts?: string[];
  allowBuckets?: string[];
  /** Checked items per UTC month; default unlimited. */
  monthlyQuota?: number;
  inboxTtlSeconds?: number;
  pinnedVersion?: string;
}

export interface CreatedOrg {
  orgId: string;
  /** The full API key (svc_test_...). */
  apiKey: string;
  keyId: string;
}

/** Calls a /platform/ operator route with the operator credential; throws unless the status is 2xx. */
export async function operator(method: string, path: string, json?: unknown): Promise<Response> {
  const res = await exports.default.fetch(BASE + path, {
    method,
    headers: { Authorization: `Bearer ${env.OPERATOR_TOKEN}`, ...(json !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: json !== undefined ? JSON.stringify(json) : undefined,
  });
  if (!res.ok) throw new Error(`operator ${method} ${path} -> ${res.status}: ${await res.text()}`);
  return res;
}

/** Creates an organisation and one API key in it. */
export async function createOrg(opts: CreateOrgOptions = {}): Promise<CreatedOrg> {
  const res = await operator("POST", "/platform/orgs", {
    name: opts.name ?? "Test org",
    region: opts.region ?? "us",
    parent_id: opts.parentId ?? null,
    billing: opts.billing ?? "active",
    learning: opts.learning ?? true,
    allow_hosts: opts.allowHosts ?? [],
    allow_buckets: opts.allowBuckets ?? [],
    monthly_quota: opts.monthlyQuota ?? null,
    inbox_ttl: opts.inboxTtlSeconds ?? 86400,
    ...(opts.pinnedVersion ? { pinned_version: opts.pinnedVersion } : {}),
  });
  const { org_id: orgId } = (await res.json()) as { org_id: string };
  const { apiKey, keyId } = await mintKey(orgId, opts.permissions ?? ALL_PERMISSIONS);
  return { orgId, apiKey, keyId };
}

/** Mints another API key for an organisation (as the operator). */
export async function mintKey(orgId: string, permissions: Permission[] = ALL_PERMISSIONS): Promise<{ apiKey: string; keyId: string }> {
  const res = await operator("POST", `/platform/orgs/${orgId}/keys`, { permissions });
  const body = (await res.json()) as { key: string; key_id: string };
  return { apiKey: body.key, keyId: body.key_id };
}

export type ApiInit = RequestInit & {
  /** Sent as Authorization: Bearer <key> (an API key, a JWT or a session token). */
  key?: string;
  /** Sent as the JSON body with Content-Type: application/json. */
  json?: unknown;
  /** Base address; default BASE. Use REGION_BASE.eu etc. for a region's own address. */
  base?: string;
};

/** Calls the Worker at BASE + path. Adds no Idempotency-Key: pass one in `headers` where a POST needs it. */
export async function api(path: string, init: ApiInit = {}): Promise<Response> {
  const { key, json, base, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== undefined) headers.set("Authorization", `Bearer ${key}`);
  let body = rest.body;
  if (json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(json);
  }
  return exports.default.fetch((base ?? BASE) + path, { ...rest, headers, body });
}

/**
 * Waits as long as an organisation's `api` bucket takes to refill from empty (BUCKETS in
 * durable-objects/tenant-gate.ts). For a test that follows a file's worth of requests for the same
 * organisation with many more of its own: on a fast machine they would otherwise meet the rate limit,
 * which is not what such a test is about (test/integration/ratelimit-api.test.ts is).
 */
export async function refillApiBucket(): Promise<void> {
  const { rate, burst } = BUCKETS.api;
  await new Promise((r) => setTimeout(r, Math.ceil((burst / rate) * 1000) + 100));
}
