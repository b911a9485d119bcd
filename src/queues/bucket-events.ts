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

export const BUCKET_EVENTS_QUEUE_NAME = "countersign-bucket-events";

/**
 * How long a message waits in all for its organisation's move to end. The wait is a chain of fresh
 * delayed messages, each carrying this deadline (`deferUntil`, epoch ms), so it spends none of the
 * retries (max_retries) kept for failures; past the deadline the message is retried as a failure and
 * ends in the dead-letter queue, which ends its drop visibly.
 */
export const MOVE_WAIT_MS = 24 * 60 * 60 * 1000;

type Deferred<T> = T & { deferUntil?: number };

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
        const deferred = body as Deferred<R2EventMessage | DropDeadlineMessage>;
        const deferUntil = typeof deferred.deferUntil === "number" ? deferred.deferUntil : Date.now() + MOVE_WAIT_MS;
        if (Date.now() < deferUntil) {
          try {
            await env.BUCKET_EVENTS_QUEUE.send({ ...deferred, deferUntil }, { delaySeconds: err.delaySeconds });
            message.ack();
          } catch (sendErr) {
            logError("bucket event could not be deferred; retrying", sendErr, { body: JSON.stringify(body).slice(0, 1024) });
            message.retry({ delaySeconds: err.delaySeconds });
          }
          continue;
        }
        logError("bucket event still waiting for its organisation's move past its deadline; retrying as a failure", undefined, {
          body: JSON.stringify(body).slice(0, 1024),
        });
        message.retry({ delaySeconds: backoffSeconds(message.attempts) });
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
