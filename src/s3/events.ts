/**
 * The event message of an upload, in the shape R2 event notifications send to a queue
 * (https://developers.cloudflare.com/r2/buckets/event-notifications/): the local endpoint emits exactly
 * this, so the consumer serves both runtimes alike.
 */
import { configOf } from "../config";
import type { Env } from "../env";

export type R2EventAction = "PutObject" | "CopyObject" | "CompleteMultipartUpload" | "DeleteObject" | "LifecycleDeletion";

export interface R2EventMessage {
  account: string;
  action: R2EventAction;
  bucket: string;
  object: { key: string; size?: number; eTag?: string };
  eventTime: string;
  copySource?: { bucket: string; object: string };
}

export async function emitObjectEvent(
  env: Env,
  o: { bucket: string; key: string; size: number; eTag: string; action: "PutObject" | "CompleteMultipartUpload" },
): Promise<R2EventMessage> {
  const message: R2EventMessage = {
    account: configOf(env).drops.r2?.accountId ?? "local",
    action: o.action,
    bucket: o.bucket,
    object: { key: o.key, size: o.size, eTag: o.eTag },
    eventTime: new Date().toISOString(),
  };
  await env.BUCKET_EVENTS_QUEUE.send(message, { contentType: "json" });
  return message;
}
