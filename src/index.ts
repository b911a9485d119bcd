import { createApp } from "./app";
import { ConfigError, configOf } from "./config";
import type { Env } from "./env";
import { ProblemError, renderProblem } from "./http/problem";
import { requestIdFor } from "./http/request-id";
import { LATEST_VERSION, VERSION_HEADER } from "./http/versioning";
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
 * log, not to callers), before any handler runs on a half-valid configuration. The app's middleware
 * does not run, so the headers every response carries (spec 4.1, part 9) are set here; no tenant is
 * known, so the version is the latest, as on unauthenticated routes.
 */
function misconfigured(err: ConfigError, env: Env, request: Request): Response {
  console.error(err.message);
  const id = requestIdFor(request.headers.get("X-Request-Id"));
  // DOCS_URL may itself be the bad value: then the problem type is the relative `/problems/internal_error`.
  const docs = err.issues.some((i) => i.startsWith("DOCS_URL")) ? "" : env.DOCS_URL;
  const res = renderProblem(
    new ProblemError("internal_error", "The service is misconfigured; the operator has been told why in its logs."),
    docs,
    id,
  );
  res.headers.set("X-Request-Id", id);
  res.headers.set(VERSION_HEADER, LATEST_VERSION);
  res.headers.set("Service-Latest-Version", LATEST_VERSION);
  return res;
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    try {
      configOf(env);
    } catch (err) {
      if (err instanceof ConfigError) return misconfigured(err, env, request);
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
