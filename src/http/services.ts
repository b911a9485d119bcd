import type { Context } from "hono";
import { configOf } from "../config";
import { requestServices, type RequestServices } from "../services/request-services";
import type { AppEnv } from "./context";

/**
 * The request's use cases (services/request-services.ts), built on first use from the request's tenant,
 * caller and id, and kept on the context for the rest of the request. Only tenant routes call it: they
 * run after authentication and tenancy, which set what it needs.
 */
export function services(c: Context<AppEnv>): RequestServices {
  const existing = c.get("services");
  if (existing) return existing;
  const built = requestServices({
    env: c.env,
    config: configOf(c.env),
    tenant: c.get("tenant"),
    caller: c.get("caller"),
    requestId: c.get("requestId"),
    waitUntil: (work) => c.executionCtx.waitUntil(work),
  });
  c.set("services", built);
  return built;
}
