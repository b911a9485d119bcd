import { configOf } from "../config";
import { emitLearningOutcome } from "../services/webhook-emitters";
import type { Env } from "../env";
import { liveEngine } from "../services/engine-live";
import { learnConfirmed, type LearnMessage } from "../services/learning";
import { checkCrops } from "../services/check-crops";
import { liveCheckEngine } from "../services/check-engine-live";
import { liveLearningEngine } from "../services/learning-engine-live";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { reviewsRepo } from "../storage/reviews";
import { backoffSeconds } from "./retry";
import { deferForMove } from "./defer";
import { logError } from "../util/log";

/**
 * The learning queue's consumer: applies the entry bar to confirmed items and learns those that clear
 * it. Delivery is at least once; learnConfirmed acts only on a review still queued.
 */
export async function consumeLearning(batch: MessageBatch<LearnMessage>, env: Env): Promise<void> {
  const dir = directory(env.DIRECTORY);
  for (const message of batch.messages) {
    const msg = message.body;
    try {
      // The home region is read now, not taken from the message: the organisation may have moved.
      const org = await dir.getOrg(msg.orgId);
      if (!org) {
        message.ack();
        continue;
      }
      if (org.movingTo) {
        // Wait the move out with fresh delayed messages, not retries: a long move must not dead-letter it.
        await deferForMove(message, env.LEARN_QUEUE, { what: "learning" });
        continue;
      }
      await learnConfirmed(
        {
          store: regionStore(env, org.region),
          engine: liveEngine(),
          learner: liveLearningEngine(),
          crops: checkCrops({ orgId: org.id, store: regionStore(env, org.region), engine: liveCheckEngine() }),
          cap: configOf(env).learning.cap,
          announce: (outcome) => emitLearningOutcome({ env, org, store: regionStore(env, org.region) }, outcome),
        },
        msg,
      );
      message.ack();
    } catch (err) {
      logError("learning failed; retrying", err, { queue: batch.queue, message_id: message.id, attempts: message.attempts, body: msg });
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}

/** A confirmation whose learning exhausted its retries is recorded as refused, never left queued. */
export async function deadLetteredLearning(env: Env, msg: LearnMessage): Promise<void> {
  const org = await directory(env.DIRECTORY).getOrg(msg.orgId);
  if (!org) return;
  const store = regionStore(env, org.region);
  await reviewsRepo(store.db)
    .setLearningStatement(msg.orgId, msg.jobId, msg.index, ["queued"], {
      learning: "refused",
      reason: "processing_failed",
      detail: "Learning failed after repeated attempts; confirm a later check instead.",
    })
    .run();
}
