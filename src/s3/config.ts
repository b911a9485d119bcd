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
import { configOf } from "../config";
import type { RegionName } from "../domain/tenancy";

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

export function bucketNames(env: Env): Record<RegionName, string> {
  return configOf(env).drops.bucketNames;
}

/** The region whose bucket has this name, or null. */
export function regionOfBucket(env: Env, bucket: string): RegionName | null {
  const names = bucketNames(env);
  return (Object.keys(names) as RegionName[]).find((r) => names[r] === bucket) ?? null;
}

export function dropConfig(env: Env): DropConfig | null {
  const drops = configOf(env).drops;
  const names = drops.bucketNames;
  if (drops.mode === "local") {
    if (!drops.secretKey) return null;
    const endpoint = drops.s3EndpointUrl;
    return {
      mode: "local",
      bucketName: (r) => names[r],
      endpointUrl: (origin) => endpoint ?? origin,
      signingRegion: "auto",
    };
  }
  if (drops.mode === "r2") {
    const r2 = drops.r2;
    if (!r2) return null;
    return {
      mode: "r2",
      bucketName: (r) => names[r],
      // EU buckets live in the EU jurisdiction, which has its own S3 endpoint.
      endpointUrl: (_origin, r) =>
        r === "eu" ? `https://${r2.accountId}.eu.r2.cloudflarestorage.com` : `https://${r2.accountId}.r2.cloudflarestorage.com`,
      signingRegion: "auto",
    };
  }
  return null;
}
