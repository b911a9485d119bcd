import type { MiddlewareHandler } from "hono";
import { tenantGate, tenantGateName } from "../../durable-objects/tenant-gate-client";
import { mayUseDirectoryCache } from "./auth";
import type { AppEnv } from "./context";
import { localBucket } from "./local-rate";
import { ProblemError } from "./problem";
import type { RouteRules } from "./route";

/**
 * Takes a token from the tenant's bucket for the route (api or image); 429 rate_limited when empty.
 * For reads the isolate admits on its estimate of the bucket while it is well filled and reports the spends
 * to the tenant's gate soon after; near empty, and for every write, the gate decides (src/http/local-rate.ts,
 * docs/hot-path.md).
 */
export function rateLimit(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rules.rate === "none") return next();
    const bucket = rules.rate;
    const org = c.get("tenant").org;
    const result = await localBucket(tenantGateName(org.region, org.id), bucket).take(
      (spent, want) => tenantGate(c.env, org).settle(bucket, spent, want),
      (p) => c.executionCtx.waitUntil(p),
      // Reads may be admitted on the estimate; a write always asks the gate (and carries the reads' spends).
      mayUseDirectoryCache(c.req.method, c.req.path),
    );
    if (!result.ok) {
      throw new ProblemError(
        "rate_limited",
        `Too many requests for this organisation (${bucket === "image" ? "image routes: 50/s, burst 200" : "20/s, burst 50"}); retry after ${result.retryAfterSeconds} s.`,
        { headers: { "Retry-After": String(result.retryAfterSeconds) } },
      );
    }
    return next();
  };
}
