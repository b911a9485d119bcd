import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";

// PLACEHOLDER (owned by the gate work): token bucket per tenant in the TenantGate DO.
export function rateLimit(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (_c, next) => next();
}
