import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";

// PLACEHOLDER (owned by the gate work): 402 billing_required while billing is inactive or canceled.
export function billingGate(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (_c, next) => next();
}
