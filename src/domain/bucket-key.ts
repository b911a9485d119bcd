/**
 * Bucket keys: S3 access keys of a tenant's drop prefix. The access key id is public (it travels in every
 * signed request); the secret is shown once and kept encrypted, never hashed, because AWS Signature V4
 * is an HMAC keyed by the secret itself: to verify a signature the service must recompute it, so it must
 * be able to recover the secret. It is encrypted with AES-GCM under a key derived from an environment
 * secret (BUCKET_SECRET_KEY), so a copy of the database alone does not reveal any secret.
 */
import type { SealingKey } from "./sealed-secret";
import { randomBase62 } from "./api-key";

/** At most this many active keys per tenant (spec part 8). */
export const MAX_ACTIVE_BUCKET_KEYS = 2;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
/** `CS` + region hint + 17 random base32 characters: 20 characters like AWS access key ids. */
const ACCESS_KEY_PATTERN = /^CS[UE][A-Z2-7]{17}$/;
const REGION_HINTS: Record<string, string> = { us: "U", eu: "E" };
const HINT_REGIONS: Record<string, string> = { U: "us", E: "eu" };

export function mintAccessKeyId(region: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(17));
  let id = `CS${REGION_HINTS[region] ?? "U"}`;
  for (const b of bytes) id += BASE32[b & 31];
  return id;
}

/** 40 characters, as AWS secrets are; base62 keeps it free of characters shells and config files mangle. */
export function mintSecretAccessKey(): string {
  return randomBase62(40);
}

export function isAccessKeyId(s: string): boolean {
  return ACCESS_KEY_PATTERN.test(s);
}

/** The region the key was issued in (where its row lives first); the organisation may have moved since. */
export function accessKeyRegionHint(id: string): string | null {
  return HINT_REGIONS[id[2]] ?? null;
}

/** What bucket key secrets are sealed with: key material from BUCKET_SECRET_KEY (src/domain/sealed-secret.ts). */
export function bucketKeySealing(material: string): SealingKey {
  if (!material) throw new Error("BUCKET_SECRET_KEY is not set: bucket key secrets cannot be stored");
  return { material, purpose: "bucket key secrets v1" };
}

export type BucketKeyStatus = "active" | "revoked" | "expired";

/**
 * A key is active until it is revoked or, for a credential with a lifetime (R2 temporary credentials),
 * until it expires: an expired key no longer works, so it does not hold one of the active places.
 */
export function bucketKeyStatus(key: { revokedAt: string | null; expiresAt: string | null }, now: number): BucketKeyStatus {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return "expired";
  return "active";
}
