import type { Env } from "../env";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { giveUpItem, runItem, type CheckContext, type CheckMessage } from "../services/checks";
import { liveCheckEngine } from "../services/check-engine-live";
import { backoffSeconds } from "./retry";
import { logError } from "../util/log";

export const CHECK_QUEUE_NAME = "countersign-check-items";

function isCheckMessage(body: unknown): body is CheckMessage {
  const m = body as CheckMessage;
  return !!m && m.kind === "check_item" && typeof m.orgId === "string" && typeof m.jobId === "string" && Number.isInteger(m.index);
}

async function contextFor(env: Env, orgId: string): Promise<CheckContext | "gone" | "moving"> {
  // The home region is read now, not taken from the message: the organisation may have moved.
  const org = await directory(env.DIRECTORY).getOrg(orgId);
  if (!org) return "gone";
  if (org.movingTo) return "moving";
  return { env, org, store: regionStore(env, org.region), engine: liveCheckEngine() };
}

/**
 * The check queue's consumer: one item per message. Delivery is at least once, and a consumer may die
 * mid-item; runItem stores an item's outcome once and settles it idempotently, so a redelivered
 * message neither doubles the results nor the usage, and the job completes exactly once.
 */
export async function consumeChecks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const msg = message.body;
    if (!isCheckMessage(msg)) {
      logError("check queue: malformed message dropped", undefined, { queue: batch.queue, message_id: message.id, body: msg });
      message.ack();
      continue;
    }
    try {
      const ctx = await contextFor(env, msg.orgId);
      if (ctx === "gone") {
        message.ack();
        continue;
      }
      if (ctx === "moving") {
        message.retry({ delaySeconds: 30 });
        continue;
      }
      await runItem(ctx, msg.jobId, msg.index);
      message.ack();
    } catch (err) {
      logError("check item failed; retrying", err, { queue: batch.queue, message_id: message.id, attempts: message.attempts, body: msg });
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}

/** A check item whose message was dead-lettered: it ends with an error, so its job can finish. */
export async function deadLetteredCheck(env: Env, body: unknown): Promise<boolean> {
  if (!isCheckMessage(body)) return false;
  const ctx = await contextFor(env, body.orgId);
  if (typeof ctx === "string") return true;
  await giveUpItem(ctx, body.jobId, body.index);
  return true;
}
