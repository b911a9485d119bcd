import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";
import { ProblemError } from "./problem";

/** 403 permission_denied unless the caller holds the route's one permission. */
export function requirePermission(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rules.permission === "none") return next();
    const caller = c.get("caller");
    if (!caller.permissions.has(rules.permission)) {
      throw new ProblemError("permission_denied", `This route requires the permission ${rules.permission}.`, {
        extensions: { permission: rules.permission },
      });
    }
    return next();
  };
}
