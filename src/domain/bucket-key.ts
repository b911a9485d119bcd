/**
 * Bucket keys: S3 access keys of a tenant's drop prefix. The access key id is public (it travels in every
 * signed request); the secret is shown once and kept encrypted, never hashed, because AWS Signature V4
 * is an HMAC keyed by the secret itself: to verify a signature the service must recompute it, so it must
 * be able to recover the secret. It is encrypted with AES-GCM under a key derived from an environment
 * secret (BUCKET_SECRET_KEY), so a copy of the database alone does not reveal any secret.
 */
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

async function aesKey(material: string): Promise<CryptoKey> {
  if (!material) throw new Error("BUCKET_SECRET_KEY is not set: bucket key secrets cannot be stored");
  const raw = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`countersign bucket keys\0${material}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Encrypts a secret for storage: base64 of a random 12-byte IV and the AES-GCM ciphertext. The access key
 * id is the additional data, so a stored secret moved to another key's row does not decrypt.
 */
export async function sealSecret(material: string, accessKeyId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(accessKeyId) }, await aesKey(material), new TextEncoder().encode(secret)),
  );
  const out = new Uint8Array(12 + sealed.length);
  out.set(iv);
  out.set(sealed, 12);
  return toBase64(out);
}

export async function openSecret(material: string, accessKeyId: string, box: string): Promise<string> {
  const bytes = fromBase64(box);
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes.subarray(0, 12), additionalData: new TextEncoder().encode(accessKeyId) },
    await aesKey(material),
    bytes.subarray(12),
  );
  return new TextDecoder().decode(plain);
}
