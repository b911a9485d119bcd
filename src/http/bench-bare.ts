import { Hono, type MiddlewareHandler } from "hono";
import type { App } from "../app";
import type { AppEnv } from "./context";
import { pipelineFor } from "./pipeline";
import { ProblemError } from "./problem";
import { resolveRules } from "./route";

/** Path of the bare benchmark route (mounted by src/index.ts only when BENCH_BARE_ROUTE is "1"). */
export const BARE_ROUTE_PATH = "/__bench/bare";

/**
 * A bare Hono route, no middleware: what `npm run bench:api` divides the API's latency by, so the ratio
 * is the cost of our request pipeline alone (same Worker entry, same workerd, same connection path).
 */
export const bareApp = new Hono().get(BARE_ROUTE_PATH, (c) => c.json({ ok: true }));

/** An authenticated read with the whole pipeline of a `/sig/` GET (org:read) and no storage of its own. */
export const PIPELINE_ROUTE_PATH = "/sig/__bench/pipeline";

/**
 * Registers PIPELINE_ROUTE_PATH, which answers like any unknown route unless BENCH_BARE_ROUTE is "1":
 * bench:api measures the pipeline's share of a read apart from the handler's own storage reads.
 * Not part of the OpenAPI document.
 */
export function registerBenchRoutes(app: App): void {
  const benchOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (c.env.BENCH_BARE_ROUTE !== "1") throw new ProblemError("not_found", `No route GET ${PIPELINE_ROUTE_PATH}.`);
    return next();
  };
  const chain = [benchOnly, ...pipelineFor(resolveRules("get", { permission: "org:read" }))];
  for (const handler of chain) app.use(PIPELINE_ROUTE_PATH, handler);
  app.get(PIPELINE_ROUTE_PATH, (c) => c.json({ ok: true }));
}
