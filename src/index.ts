import { createApp } from "./app";
import { ConfigError, configOf } from "./config";
import type { Env } from "./env";
import { ProblemError, renderProblem } from "./http/problem";
import { dispatchQueue } from "./queues/dispatch";
import { sweepInboxes } from "./services/inbox";
import { sweepWebhooks } from "./services/webhook-sweep";
import { handleS3, isS3Request } from "./s3/endpoint";
import { BARE_ROUTE_PATH, PIPELINE_ROUTE_PATH, bareApp, benchPipelineApp } from "./http/bench-bare";

export { TenantGate } from "../durable-objects/tenant-gate";
export { Job } from "../durable-objects/job";
export { LiveCapture } from "../durable-objects/live-capture";

const app = createApp();

/**
 * A misconfigured service answers every request 500 with a problem document (the details go to the
 * log, not to callers), before any handler runs on a half-valid configuration.
 */
function misconfigured(err: ConfigError, env: Env): Response {
  console.error(err.message);
  // DOCS_URL may itself be the bad value: then the problem type is the relative `/problems/internal_error`.
  const docs = err.issues.some((i) => i.startsWith("DOCS_URL")) ? "" : env.DOCS_URL;
  return renderProblem(
    new ProblemError("internal_error", "The service is misconfigured; the operator has been told why in its logs."),
    docs,
  );
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    try {
      configOf(env);
    } catch (err) {
      if (err instanceof ConfigError) return misconfigured(err, env);
      throw err;
    }
    const url = new URL(request.url);
    // Benchmarks only (BENCH_BARE_ROUTE): the runtime's own cost, measured through this same entry.
    if (env.BENCH_BARE_ROUTE === "1" && url.pathname === BARE_ROUTE_PATH) return bareApp.fetch(request, env, ctx);
    if (env.BENCH_BARE_ROUTE === "1" && url.pathname === PIPELINE_ROUTE_PATH) return benchPipelineApp.fetch(request, env, ctx);
    // The local S3 endpoint (/s3/..., or /<bucket>/...) speaks S3, not the API: it bypasses the API's middleware.
    if (isS3Request(url, env)) return handleS3(request, env, ctx);
    return app.fetch(request, env, ctx);
  },
  async queue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
    // Throws ConfigError before any message is touched: the batch is retried once the config is fixed.
    configOf(env);
    await dispatchQueue(batch, env, ctx);
  },
  async scheduled(controller: ScheduledController, env: Env, _ctx: ExecutionContext): Promise<void> {
    configOf(env);
    await sweepInboxes(env, new Date(controller.scheduledTime));
    await sweepWebhooks(env, new Date(controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
