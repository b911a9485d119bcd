import type { Env } from "../env";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { giveUpItem, type CheckContext, type CheckMessage } from "../services/checks";
import { BATCH_CONCURRENCY, runItems } from "../services/check-batch";
import { concurrencyGate } from "../util/map-limited";
import { liveCheckEngine } from "../services/check-engine-live";
import { backoffSeconds } from "./retry";
import { deferForMove } from "./defer";
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
 * The check queue's consumer: one item per message, a batch's items run together. Messages are
 * grouped by organisation (its context is read once) and by job (runItems: one read of the job and its
 * items, one store and one settle for all of them), and the jobs of a batch run concurrently.
 * Delivery is at least once, and a consumer may die mid-item; an item's outcome is stored once and
 * settled idempotently, so a redelivered message neither doubles the results nor the usage, and the
 * job completes exactly once. Each message is acked or retried on its own item's fate.
 */
export async function consumeChecks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byOrg = new Map<string, Map<string, Message<unknown>[]>>();
  // One bound on the items in flight for the whole batch, whichever jobs they belong to.
  const gate = concurrencyGate(BATCH_CONCURRENCY);
  for (const message of batch.messages) {
    const msg = message.body;
    if (!isCheckMessage(msg)) {
      logError("check queue: malformed message dropped", undefined, { queue: batch.queue, message_id: message.id, body: msg });
      message.ack();
      continue;
    }
    const jobs = byOrg.get(msg.orgId) ?? new Map<string, Message<unknown>[]>();
    byOrg.set(msg.orgId, jobs);
    jobs.set(msg.jobId, [...(jobs.get(msg.jobId) ?? []), message]);
  }
  const retry = (message: Message<unknown>, err: unknown) => {
    logError("check item failed; retrying", err, {
      queue: batch.queue,
      message_id: message.id,
      attempts: message.attempts,
      body: message.body,
    });
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
  };
  const runOrg = async (orgId: string, jobs: Map<string, Message<unknown>[]>) => {
    const all = [...jobs.values()].flat();
    let ctx: Awaited<ReturnType<typeof contextFor>>;
    try {
      ctx = await contextFor(env, orgId);
    } catch (err) {
      for (const m of all) retry(m, err);
      return;
    }
    if (ctx === "gone") {
      for (const m of all) m.ack();
      return;
    }
    if (ctx === "moving") {
      // Wait the move out with fresh delayed messages, not retries: a long move must not fail its items.
      await Promise.all(all.map((m) => deferForMove(m, env.CHECK_QUEUE, { what: "check item" })));
      return;
    }
    const context = ctx;
    await Promise.all(
      [...jobs.entries()].map(async ([jobId, messages]) => {
        try {
          const outcome = await runItems(
            context,
            jobId,
            messages.map((m) => (m.body as CheckMessage).index),
            gate,
          );
          for (const m of messages) {
            const index = (m.body as CheckMessage).index;
            if (!outcome.has(index)) retry(m, new Error(`item ${index} was not run`));
            else if (outcome.get(index) === undefined) m.ack();
            else retry(m, outcome.get(index));
          }
        } catch (err) {
          for (const m of messages) retry(m, err);
        }
      }),
    );
  };
  await Promise.all([...byOrg.entries()].map(([orgId, jobs]) => runOrg(orgId, jobs)));
}

/** A check item whose message was dead-lettered: it ends with an error, so its job can finish. */
export async function deadLetteredCheck(env: Env, body: unknown): Promise<boolean> {
  if (!isCheckMessage(body)) return false;
  const ctx = await contextFor(env, body.orgId);
  if (typeof ctx === "string") return true;
  await giveUpItem(ctx, body.jobId, body.index);
  return true;
}
