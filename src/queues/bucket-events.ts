/**
 * The bucket-events queue's consumer: R2 event notifications (production) or the local S3 endpoint's
 * identical messages, plus the delayed messages that end a batch's wait for its files. Delivery is at
 * least once; services/bucket-drops.ts makes every step idempotent.
 */
import { logError } from "../util/log";
import type { Env } from "../env";
import type { R2EventMessage } from "../s3/events";
import { deadLetteredDrop, handleDropDeadline, handleObjectEvent, RetryLater, type DropDeadlineMessage } from "../services/bucket-drops";
import { backoffSeconds } from "./retry";
import { deferForMove } from "./defer";

export const BUCKET_EVENTS_QUEUE_NAME = "countersign-bucket-events";

export function isObjectEvent(body: unknown): body is R2EventMessage {
  const m = body as R2EventMessage;
  return (
    !!m &&
    typeof m.action === "string" &&
    typeof m.bucket === "string" &&
    typeof m.object?.key === "string" &&
    typeof m.eventTime === "string"
  );
}

export function isDeadline(body: unknown): body is DropDeadlineMessage {
  const m = body as DropDeadlineMessage;
  return !!m && m.kind === "drop_deadline" && typeof m.orgId === "string" && typeof m.dropId === "string";
}

export async function consumeBucketEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body;
    try {
      // The message id (kept across its retries) names the delivery that may hold a drop's lock.
      if (isObjectEvent(body)) await handleObjectEvent(env, body, message.id);
      else if (isDeadline(body)) await handleDropDeadline(env, body, message.id);
      else logError("bucket events: malformed message dropped", undefined, { body: JSON.stringify(body).slice(0, 1024) });
      message.ack();
    } catch (err) {
      if (err instanceof RetryLater) {
        // Its organisation is moving: wait with fresh delayed messages, not retries (see defer.ts).
        await deferForMove(message, env.BUCKET_EVENTS_QUEUE, { delaySeconds: err.delaySeconds, what: "bucket event" });
        continue;
      }
      logError("bucket event failed; retrying", err, { body: JSON.stringify(body).slice(0, 1024) });
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}

/** A bucket-events message that exhausted its retries: its drop ends with a failed summary.json. */
export async function deadLetteredBucketEvent(env: Env, body: unknown, messageId: string): Promise<void> {
  if (isObjectEvent(body) || isDeadline(body)) await deadLetteredDrop(env, body, messageId);
}
