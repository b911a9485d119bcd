import type { MiddlewareHandler } from "hono";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import type { AppEnv } from "./context";
import { ProblemError } from "./problem";
import type { RouteRules } from "./route";

/** Takes a token from the tenant's bucket for the route (api or image); 429 rate_limited when empty. */
export function rateLimit(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rules.rate === "none") return next();
    const result = await tenantGate(c.env, c.get("tenant").org).take(rules.rate);
    if (!result.ok) {
      throw new ProblemError(
        "rate_limited",
        `Too many requests for this organisation (${rules.rate === "image" ? "image routes: 50/s, burst 200" : "20/s, burst 50"}); retry after ${result.retryAfterSeconds} s.`,
        { headers: { "Retry-After": String(result.retryAfterSeconds) } },
      );
    }
    return next();
  };
}
