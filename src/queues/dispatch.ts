import type { Env } from "../env";
import type { EnrolMessage } from "../services/enrolment";
import { consumeEnrolments, deadLetteredEnrolment } from "./enrolments";
import { consumeChecks, deadLetteredCheck } from "./checks";
import { consumeBucketEvents } from "./bucket-events";

export const QUEUE_NAMES = {
  checks: "countersign-check-items",
  enrolments: "countersign-enrolments",
  bucketEvents: "countersign-bucket-events",
  deadLetter: "countersign-dead-letter",
} as const;

/** Routes a batch to the consumer of its queue. */
export async function dispatchQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  switch (batch.queue) {
    case QUEUE_NAMES.checks:
      return consumeChecks(batch, env);
    case QUEUE_NAMES.enrolments:
      return consumeEnrolments(batch as MessageBatch<EnrolMessage>, env);
    case QUEUE_NAMES.bucketEvents:
      return consumeBucketEvents(batch, env);
    case QUEUE_NAMES.deadLetter:
      // Messages that exhausted their retries: logged for operators, then dropped.
      for (const m of batch.messages) {
        console.error("dead-lettered message", m.id, JSON.stringify(m.body));
        const body = m.body as { kind?: string };
        try {
          if (body?.kind === "enrol") await deadLetteredEnrolment(env, body as EnrolMessage);
          if (body?.kind === "check_item") await deadLetteredCheck(env, body);
          m.ack();
        } catch (err) {
          console.error("dead-letter handling failed", err);
          m.retry({ delaySeconds: 60 });
        }
      }
      return;
    default:
      console.warn(`no consumer for queue ${batch.queue}; retrying ${batch.messages.length} message(s)`);
      batch.retryAll({ delaySeconds: 60 });
  }
}
