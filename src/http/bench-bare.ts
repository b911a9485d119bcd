import { Hono } from "hono";
import { configOf } from "../config";
import { accessLog } from "./access-log";
import type { AppEnv } from "./context";
import { pipelineFor } from "./pipeline";
import { ProblemError, isProblemError, renderProblem } from "./problem";
import { requestId } from "./request-id";
import { resolveRules } from "./route";
import { versioning } from "./versioning";

/**
 * Benchmark-only routes, reached through the Worker's entry (src/index.ts) only when BENCH_BARE_ROUTE is
 * "1" (set by `npm run bench:api` and `npm run bench:speed`, never in wrangler.toml). They are not part of
 * the app, its route table or its OpenAPI document.
 */

/** Path of the bare route. */
export const BARE_ROUTE_PATH = "/__bench/bare";

/**
 * A bare Hono route, no middleware: what `npm run bench:api` divides the API's latency by, so the ratio
 * is the cost of our request pipeline alone (same Worker entry, same workerd, same connection path).
 */
export const bareApp = new Hono().get(BARE_ROUTE_PATH, (c) => c.json({ ok: true }));

/** An authenticated read with the whole pipeline of a `/sig/` GET (org:read) and no storage of its own. */
export const PIPELINE_ROUTE_PATH = "/sig/__bench/pipeline";

/**
 * The app's global middleware and the pipeline of a GET needing org:read, in front of a constant answer:
 * bench:api measures the pipeline's share of a read apart from a handler's own storage reads.
 */
export const benchPipelineApp = new Hono<AppEnv>();
benchPipelineApp.use("*", requestId());
benchPipelineApp.use("*", accessLog());
benchPipelineApp.use("*", versioning());
for (const handler of pipelineFor(resolveRules("get", { permission: "org:read" }))) benchPipelineApp.use(PIPELINE_ROUTE_PATH, handler);
benchPipelineApp.get(PIPELINE_ROUTE_PATH, (c) => c.json({ ok: true }));
benchPipelineApp.onError((err, c) =>
  renderProblem(
    isProblemError(err) ? err : new ProblemError("internal_error", "An internal error occurred."),
    configOf(c.env).docsUrl,
    c.get("requestId"),
  ),
);
