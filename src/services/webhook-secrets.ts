/**
 * Endpoint signing secrets at rest. A secret must be readable to sign with it (unlike an API key, it
 * cannot be kept as a hash), so it is sealed with AES-GCM under a key derived (HKDF) from
 * WEBHOOK_SECRET_KEY, else from OPERATOR_TOKEN, and bound to its endpoint: a sealed secret copied onto
 * another endpoint's row does not open.
 */
import type { Env } from "../env";
import { configOf } from "../config";
import { openSecret as open, sealSecret as seal, type SealingKey } from "../domain/sealed-secret";

function sealingKey(env: Env): SealingKey {
  return { material: configOf(env).webhooks.secretKey, purpose: "webhook signing secrets v1" };
}

export function sealSecret(env: Env, webhookId: string, secret: string): Promise<string> {
  return seal(sealingKey(env), webhookId, secret);
}

export function openSecret(env: Env, webhookId: string, sealed: string): Promise<string> {
  return open(sealingKey(env), webhookId, sealed);
}
