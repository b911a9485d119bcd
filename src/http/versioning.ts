import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";

// PLACEHOLDER (owned by the gate/versioning work): version registry, 400 invalid_version, response
// transforms back to older versions, and the Service-Version / Deprecation headers.
export const LATEST_VERSION = "2026-09-27";

export function versioning(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("version", LATEST_VERSION);
    c.set("versionFromHeader", false);
    await next();
    c.header("Service-Version", c.get("version"));
    c.header("Service-Latest-Version", LATEST_VERSION);
  };
}
