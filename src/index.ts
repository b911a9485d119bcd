import { createApp } from "./app";
import type { Env } from "./env";
import { dispatchQueue } from "./queues/dispatch";
import { sweepInboxes } from "./services/inbox";
import { handleS3, isS3Request } from "./s3/endpoint";

export { TenantGate } from "../durable-objects/tenant-gate";
export { Job } from "../durable-objects/job";
export { LiveCapture } from "../durable-objects/live-capture";

const app = createApp();

export default {
  // The local S3 endpoint (/s3/..., or /<bucket>/...) speaks S3, not the API: it bypasses the API's middleware.
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    if (isS3Request(new URL(request.url), env)) return handleS3(request, env, ctx);
    return app.fetch(request, env, ctx);
  },
  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    await dispatchQueue(batch, env, ctx);
  },
  async scheduled(controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
    await sweepInboxes(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
