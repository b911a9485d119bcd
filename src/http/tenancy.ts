import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";

// PLACEHOLDER (owned by the auth work): sets c.var.tenant (Service-Org, suspension, region routing).
export function resolveTenant(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (_c, next) => next();
}
