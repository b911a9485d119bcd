/**
 * Where tenants drop documents, as configured. Two ways to serve the drop bucket:
 *
 *  - `local`: this Worker serves an S3-compatible endpoint (path-style, at the root for the regional
 *    bucket names and under /s3/), verifies AWS
 *    Signature V4 with the bucket keys it issues, writes into the regional R2 bucket and emits the
 *    R2 event-notification message itself. For `wrangler dev` and tests, where R2 has no S3 API.
 *  - `r2`: production. R2's own S3 endpoint and R2 event notifications (a rule on each regional
 *    bucket, prefix `orgs/`, to BUCKET_EVENTS_QUEUE); the keys are R2 credentials scoped to the
 *    tenant's prefix, minted through the Cloudflare API (see src/s3/r2-credentials.ts).
 *
 * Unset: the bucket-key routes answer 501 (spec part 7).
 */
import type { Env } from "../env";
import type { RegionName } from "../http/context";

export type DropMode = "local" | "r2";

export interface DropConfig {
  mode: DropMode;
  /** The regional R2 bucket's name, as S3 clients address it. */
  bucketName(region: RegionName): string;
  /** The S3 endpoint URL clients use (`--endpoint-url`), given the address the caller used (local: the origin itself). */
  endpointUrl(origin: string, region: RegionName): string;
  /** The region S3 clients sign with. R2 takes `auto`; the local endpoint accepts any. */
  signingRegion: string;
}

const DEFAULT_BUCKETS: Record<RegionName, string> = { us: "countersign-files-us", eu: "countersign-files-eu" };

export function bucketNames(env: Pick<Env, "R2_BUCKET_NAMES">): Record<RegionName, string> {
  if (!env.R2_BUCKET_NAMES) return DEFAULT_BUCKETS;
  try {
    return { ...DEFAULT_BUCKETS, ...(JSON.parse(env.R2_BUCKET_NAMES) as Partial<Record<RegionName, string>>) };
  } catch {
    return DEFAULT_BUCKETS;
  }
}

/** The region whose bucket has this name, or null. */
export function regionOfBucket(env: Pick<Env, "R2_BUCKET_NAMES">, bucket: string): RegionName | null {
  const names = bucketNames(env);
  return (Object.keys(names) as RegionName[]).find((r) => names[r] === bucket) ?? null;
}

export function dropConfig(env: Env): DropConfig | null {
  const names = bucketNames(env);
  if (env.BUCKET_KEYS_MODE === "local") {
    if (!env.BUCKET_SECRET_KEY) return null;
    return {
      mode: "local",
      bucketName: (r) => names[r],
      endpointUrl: (origin) => env.S3_ENDPOINT_URL || origin,
      signingRegion: "auto",
    };
  }
  if (env.BUCKET_KEYS_MODE === "r2") {
    if (!env.R2_ACCOUNT_ID || !env.CF_API_TOKEN || !env.R2_PARENT_ACCESS_KEY_ID) return null;
    return {
      mode: "r2",
      bucketName: (r) => names[r],
      // EU buckets live in the EU jurisdiction, which has its own S3 endpoint.
      endpointUrl: (_origin, r) => (r === "eu" ? `https://${env.R2_ACCOUNT_ID}.eu.r2.cloudflarestorage.com` : `https://${env.R2_ACCOUNT_ID}.r2.cloudflarestorage.com`),
      signingRegion: "auto",
    };
  }
  return null;
}
