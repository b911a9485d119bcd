import { logError } from "../util/log";
import type { Env } from "../env";
import { hopDelaySeconds } from "../domain/webhook-retry";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { attemptDelivery } from "../services/webhook-delivery";
import type { WebhookMessage } from "../services/webhooks";
import { backoffSeconds } from "./retry";
import { deferForMove } from "./defer";

export const WEBHOOK_QUEUE_NAME = "countersign-webhook-deliveries";

function isWebhookMessage(body: unknown): body is WebhookMessage {
  const m = body as WebhookMessage;
  return (
    !!m &&
    m.kind === "webhook_delivery" &&
    typeof m.orgId === "string" &&
    typeof m.deliveryId === "string" &&
    Number.isInteger(m.attempt) &&
    m.attempt >= 1 &&
    typeof m.due === "number"
  );
}

/**
 * The webhook queue's consumer: one attempt per message. The next attempt is a new message (not a
 * retry of this one), so the schedule is ours, not bounded by the queue's max_retries; a wait longer
 * than one message may be delayed (12 h) is made of hops. Queue retries are kept for our own failures
 * (storage errors), which never count as attempts.
 */
export async function consumeWebhooks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  // Attempts of one batch run side by side: one slow receiver must not hold up the others.
  await Promise.all(batch.messages.map((message) => handle(message, env)));
}

async function handle(message: Message<unknown>, env: Env): Promise<void> {
  const msg = message.body;
  if (!isWebhookMessage(msg)) {
    logError("webhook queue: malformed message dropped", undefined, { body: JSON.stringify(msg).slice(0, 1024) });
    message.ack();
    return;
  }
  try {
    const now = Date.now();
    if (msg.due > now + 1000) {
      await env.WEBHOOK_QUEUE.send(msg, { delaySeconds: hopDelaySeconds(msg.due, now) });
      message.ack();
      return;
    }
    const org = await directory(env.DIRECTORY).getOrg(msg.orgId);
    if (!org) {
      message.ack();
      return;
    }
    if (org.movingTo) {
      // Wait the move out with fresh delayed messages, not retries: a long move must not dead-letter it.
      await deferForMove(message, env.WEBHOOK_QUEUE, { what: "webhook delivery" });
      return;
    }
    const outcome = await attemptDelivery({ env, org, store: regionStore(env, org.region) }, msg);
    if (outcome.kind === "busy") {
      message.retry({ delaySeconds: outcome.retryAfterSeconds });
      return;
    }
    if (outcome.kind === "next") {
      await env.WEBHOOK_QUEUE.send(outcome.message, { delaySeconds: hopDelaySeconds(outcome.message.due, Date.now()) });
    }
    message.ack();
  } catch (err) {
    logError("webhook delivery failed; retrying", err, { body: JSON.stringify(msg).slice(0, 1024) });
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
  }
}
