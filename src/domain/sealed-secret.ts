/**
 * Secrets the service must read back (webhook signing secrets, bucket keys' SigV4 secrets) cannot be
 * kept as hashes the way API keys are. They are sealed with AES-GCM under a key derived (HKDF-SHA-256)
 * from a configured secret and a purpose, and bound to the id of the row that holds them (the additional
 * data), so a sealed secret copied onto another row does not open. Format: `v1.<iv>.<ciphertext>`.
 */
import { fromBase64, toBase64 } from "../util/bytes";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function sealingKey(material: string, purpose: string): Promise<CryptoKey> {
  if (!material) throw new Error(`sealed secrets (${purpose}): no key material is configured`);
  const cacheKey = `${purpose}\0${material}`;
  let key = keys.get(cacheKey);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(material), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: encoder.encode("countersign"), info: encoder.encode(purpose) },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(cacheKey, key);
  }
  return key;
}

export interface SealingKey {
  /** The configured secret the key is derived from. */
  material: string;
  /** What the sealed secrets are, e.g. "webhook signing secrets v1": another purpose derives another key. */
  purpose: string;
}

export async function sealSecret(key: SealingKey, boundTo: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(boundTo) },
    await sealingKey(key.material, key.purpose),
    encoder.encode(secret),
  );
  return `v1.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

/** Throws when the format is unknown, the row id differs, or the key material changed since sealing. */
export async function openSecret(key: SealingKey, boundTo: string, sealed: string): Promise<string> {
  const [version, iv, data, extra] = sealed.split(".");
  if (version !== "v1" || !iv || !data || extra !== undefined) throw new Error("sealed secret: unknown format");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(boundTo) },
    await sealingKey(key.material, key.purpose),
    fromBase64(data),
  );
  return new TextDecoder().decode(plain);
}
