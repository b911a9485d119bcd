/**
 * Endpoint signing secrets at rest. A secret must be readable to sign with it (unlike an API key, it
 * cannot be kept as a hash), so it is sealed with AES-GCM under a key derived (HKDF) from
 * WEBHOOK_SECRET_KEY, else from OPERATOR_TOKEN, and bound to its endpoint: a sealed secret copied onto
 * another endpoint's row does not open.
 */
import type { Env } from "../env";
import { configOf } from "../config";

type SecretEnv = Env;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function sealingKey(env: SecretEnv): Promise<CryptoKey> {
  const secret = configOf(env).webhooks.secretKey;
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: encoder.encode("countersign"), info: encoder.encode("webhook signing secrets v1") },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(secret, key);
  }
  return key;
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export async function sealSecret(env: SecretEnv, webhookId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(webhookId) }, await sealingKey(env), encoder.encode(secret));
  return `v1.${b64(iv)}.${b64(new Uint8Array(sealed))}`;
}

export async function openSecret(env: SecretEnv, webhookId: string, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== "v1" || !iv || !data) throw new Error("webhook secret: unknown sealing format");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64(iv), additionalData: encoder.encode(webhookId) }, await sealingKey(env), unb64(data));
  return new TextDecoder().decode(plain);
}
