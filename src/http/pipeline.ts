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
 * permission (403) -> billing (402) -> rate limit (429) -> idempotency (400/409/replay).
 * Body and parameter validation run after this chain (zod validators of the route).
 */
export function pipelineFor(rules: Required<RouteRules>): MiddlewareHandler<AppEnv>[] {
  if (rules.permission === "none") return [];
  const chain: MiddlewareHandler<AppEnv>[] = [authenticate(rules), resolveTenant(rules), pinnedVersion(), requirePermission(rules)];
  if (rules.billing) chain.push(billingGate(rules));
  if (rules.rate !== "none") chain.push(rateLimit(rules));
  if (rules.idempotency !== "none") chain.push(idempotency(rules));
  return chain;
}
