import type { Env } from "../env";
import type { EnrolMessage } from "../services/enrolment";
import { consumeEnrolments, deadLetteredEnrolment } from "./enrolments";
import { consumeChecks, deadLetteredCheck } from "./checks";
import { consumeLearning, deadLetteredLearning } from "./learning";
import type { LearnMessage } from "../services/learning";
import { logError, logWarn } from "../util/log";
import { consumeWebhooks } from "./webhooks";
import { consumeBucketEvents, deadLetteredBucketEvent } from "./bucket-events";

export const QUEUE_NAMES = {
  checks: "countersign-check-items",
  enrolments: "countersign-enrolments",
  webhooks: "countersign-webhook-deliveries",
  bucketEvents: "countersign-bucket-events",
  learning: "countersign-learning",
  deadLetter: "countersign-dead-letter",
} as const;

/**
 * The local name of a deployed queue. A deployment replaces the `countersign` of every resource name with
 * its own prefix (`countersign-staging-check-items`, see scripts/deploy), so the consumer is chosen by
 * what follows it.
 */
export function localQueueName(deployed: string): string {
  for (const name of Object.values(QUEUE_NAMES)) {
    if (deployed === name || deployed.endsWith(name.slice("countersign".length))) return name;
  }
  return deployed;
}

/** Routes a batch to the consumer of its queue. */
export async function dispatchQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  switch (localQueueName(batch.queue)) {
    case QUEUE_NAMES.checks:
      return consumeChecks(batch, env);
    case QUEUE_NAMES.enrolments:
      return consumeEnrolments(batch as MessageBatch<EnrolMessage>, env);
    case QUEUE_NAMES.webhooks:
      return consumeWebhooks(batch, env);
    case QUEUE_NAMES.bucketEvents:
      return consumeBucketEvents(batch, env);
    case QUEUE_NAMES.learning:
      return consumeLearning(batch as MessageBatch<LearnMessage>, env);
    case QUEUE_NAMES.deadLetter:
      // Messages that exhausted their retries: logged for operators, and what they were doing ends visibly.
      for (const m of batch.messages) {
        logError("dead-lettered message", undefined, { queue: batch.queue, message_id: m.id, body: m.body });
        const body = m.body as { kind?: string };
        try {
          if (body?.kind === "enrol") await deadLetteredEnrolment(env, body as EnrolMessage);
          if (body?.kind === "check_item") await deadLetteredCheck(env, body);
          if (body?.kind === "learn") await deadLetteredLearning(env, body as LearnMessage);
          await deadLetteredBucketEvent(env, m.body, m.id);
          m.ack();
        } catch (err) {
          logError("dead-letter handling failed", err, { queue: batch.queue, message_id: m.id });
          m.retry({ delaySeconds: 60 });
        }
      }
      return;
    default:
      logWarn("no consumer for this queue; retrying", { queue: batch.queue, messages: batch.messages.length });
      batch.retryAll({ delaySeconds: 60 });
  }
}
