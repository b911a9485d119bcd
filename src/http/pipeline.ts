import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import type { RouteRules } from "./route";
import { authenticate } from "./auth";
import { resolveTenant } from "./tenancy";
import { requirePermission } from "./permissions";
import { billingGate } from "./billing";
import { rateLimit } from "./rate-limit";
import { idempotency } from "./idempotency";
import { pinnedVersion } from "./versioning";

/**
 * The per-route middleware chain, in the order of architecture.md "A request's path":
 * authentication (401) -> tenancy and region (421, 503 org_moving, 404 for Service-Org) ->
 * permission (403) -> [the body's size and media type: 413, 415] -> billing (402) -> rate limit (429) ->
 * idempotency (400/409/replay). Body and parameter validation run after this chain (zod validators of the
 * route). `between` (the body's checks, route.ts) runs after the caller is known and allowed: a caller
 * without a valid credential or the permission is told that first, not what the body should have been.
 */
export function pipelineFor(rules: Required<RouteRules>, between: MiddlewareHandler<AppEnv>[] = []): MiddlewareHandler<AppEnv>[] {
  if (rules.permission === "none") return between;
  const chain: MiddlewareHandler<AppEnv>[] = [
    authenticate(rules),
    resolveTenant(rules),
    pinnedVersion(),
    requirePermission(rules),
    ...between,
  ];
  if (rules.billing) chain.push(billingGate(rules));
  if (rules.rate !== "none") chain.push(rateLimit(rules));
  if (rules.idempotency !== "none") chain.push(idempotency(rules));
  return chain;
}
