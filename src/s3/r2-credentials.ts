/**
 * Production bucket keys (BUCKET_KEYS_MODE=r2): R2 credentials scoped to the tenant's prefix, minted
 * through the Cloudflare API's temporary access credentials (object read and write, limited to the
 * prefix `orgs/<org_id>/drops/` of the regional bucket), derived from a parent R2 API token
 * (R2_PARENT_ACCESS_KEY_ID). Long-lived R2 API tokens can be scoped to buckets but not to a prefix,
 * so they cannot keep tenants apart in a shared regional bucket.
 *
 * Limits of this path, documented in docs/bucket-drops.md: the credentials expire after R2_KEY_TTL
 * (at most 7 days) and carry a session token; R2 cannot revoke one credential early, so revoking marks
 * the key revoked here and it stops being listed, while R2 keeps accepting it until it expires.
 */
import { configOf } from "../config";
import { logError } from "../util/log";
import type { Env } from "../env";
import { ProblemError } from "../http/problem";

/** Seven days, the most R2 grants. The key record keeps the expiry (storage/bucket-keys.ts). */
export const R2_KEY_TTL_SECONDS = 7 * 24 * 3600;

export interface MintedR2Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | null;
}

export async function mintR2Credentials(env: Env, bucket: string, prefix: string): Promise<MintedR2Credentials> {
  const r2 = configOf(env).drops.r2;
  if (!r2) throw unavailable();
  const url = `https://api.cloudflare.com/client/v4/accounts/${r2.accountId}/r2/temp-access-credentials`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${r2.apiToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        bucket,
        parentAccessKeyId: r2.parentAccessKeyId,
        permission: "object-read-write",
        ttlSeconds: R2_KEY_TTL_SECONDS,
        prefixes: [prefix],
      }),
    });
  } catch (err) {
    logError("R2 credentials: Cloudflare API unreachable", err);
    throw unavailable();
  }
  const body = (await res.json().catch(() => null)) as {
    success?: boolean;
    result?: { accessKeyId?: string; secretAccessKey?: string; sessionToken?: string };
  } | null;
  const r = body?.result;
  if (!res.ok || !body?.success || !r?.accessKeyId || !r.secretAccessKey) {
    logError("R2 credentials: Cloudflare API refused", undefined, { status: res.status, body: JSON.stringify(body).slice(0, 1024) });
    throw unavailable();
  }
  return { accessKeyId: r.accessKeyId, secretAccessKey: r.secretAccessKey, sessionToken: r.sessionToken ?? null };
}

/** R2 cannot revoke one temporary credential early; see the module comment. */
export async function revokeR2Credentials(_env: Env, _accessKeyId: string): Promise<void> {}

function unavailable(): ProblemError {
  return new ProblemError("unavailable", "The storage provider could not issue a key right now; retry shortly.", {
    headers: { "Retry-After": "10" },
  });
}
