import type { Env } from "../env";

/** Routes a batch to the consumer of its queue. Queues without a consumer yet retry their messages. */
export async function dispatchQueue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  switch (batch.queue) {
    default:
      console.warn(`no consumer for queue ${batch.queue}; retrying ${batch.messages.length} message(s)`);
      batch.retryAll({ delaySeconds: 60 });
  }
}
