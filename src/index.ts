import { createApp } from "./app";
import type { Env } from "./env";
import { dispatchQueue } from "./queues/dispatch";

export { TenantGate } from "../durable-objects/tenant-gate";
export { Job } from "../durable-objects/job";
export { LiveCapture } from "../durable-objects/live-capture";

const app = createApp();

export default {
  fetch: app.fetch,
  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(batch, env, ctx);
  },
  async scheduled(_controller: ScheduledController, _env: Env, _ctx: ExecutionContext): Promise<void> {
    // The inbox sweep is added with checks.
  },
} satisfies ExportedHandler<Env>;
