import { createApp } from "./app";
import type { Env } from "./env";
import { dispatchQueue } from "./queues/dispatch";
import { sweepInboxes } from "./services/inbox";
import { sweepWebhooks } from "./services/webhook-sweep";

export { TenantGate } from "../durable-objects/tenant-gate";
export { Job } from "../durable-objects/job";
export { LiveCapture } from "../durable-objects/live-capture";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(batch, env, ctx);
  },
  async scheduled(controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
    await sweepInboxes(env, new Date(controller.scheduledTime));
    await sweepWebhooks(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
