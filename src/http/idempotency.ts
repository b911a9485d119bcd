import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";

// PLACEHOLDER (owned by the gate work): Idempotency-Key records in the TenantGate DO.
export function idempotency(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (_c, next) => next();
}
