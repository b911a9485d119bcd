import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";
import { ProblemError } from "./problem";

// PLACEHOLDER (owned by the auth work): establishes c.var.caller from API key, JWT or session token.
export function authenticate(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async () => {
    throw new ProblemError("unauthorized", "Authentication is not available yet.");
  };
}
