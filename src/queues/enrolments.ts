import type { Env } from "../env";
import { enrolQueued, failQueued, type EnrolMessage } from "../services/enrolment";
import { liveEngine } from "../services/engine-live";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { backoffSeconds } from "./retry";
import { deferForMove } from "./defer";
import { logError } from "../util/log";
import { emitQueuedReference } from "../services/webhook-emitters";

/**
 * The enrolment queue's consumer: enrols references queued by PUT .../references. Delivery is at least
 * once; enrolQueued is guarded by the upload id and status, so a redelivered message changes nothing.
 */
export async function consumeEnrolments(batch: MessageBatch<EnrolMessage>, env: Env): Promise<void> {
  const dir = directory(env.DIRECTORY);
  for (const message of batch.messages) {
    const msg = message.body;
    try {
      // The organisation's home region is read now, not taken from the message: it may have moved.
      const org = await dir.getOrg(msg.orgId);
      if (!org) {
        message.ack();
        continue;
      }
      if (org.movingTo) {
        // Wait the move out with fresh delayed messages, not retries: a long move must not dead-letter it.
        await deferForMove(message, env.ENROL_QUEUE, { what: "enrolment" });
        continue;
      }
      const store = regionStore(env, org.region);
      await enrolQueued({ store, engine: liveEngine() }, msg);
      // reference.enrolled / reference.rejected, also on a redelivery (the event id is the upload's).
      await emitQueuedReference({ env, org, store }, msg.subjectReference, msg.refId, msg.uploadId);
      message.ack();
    } catch (err) {
      logError("enrolment failed; retrying", err, { queue: batch.queue, message_id: message.id, attempts: message.attempts, body: msg });
      message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }
}

/** A queued enrolment that exhausted its retries becomes a visible rejection. */
export async function deadLetteredEnrolment(env: Env, msg: EnrolMessage): Promise<void> {
  const org = await directory(env.DIRECTORY).getOrg(msg.orgId);
  if (!org) return;
  const store = regionStore(env, org.region);
  await failQueued(store, msg);
  await emitQueuedReference({ env, org, store }, msg.subjectReference, msg.refId, msg.uploadId);
}
