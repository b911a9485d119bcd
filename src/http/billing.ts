import type { MiddlewareHandler } from "hono";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import type { Env } from "../env";
import { directory } from "../storage/directory";
import type { AppEnv } from "./context";
import type { BillingState, Org, Tenant } from "../domain/tenancy";
import { ProblemError } from "./problem";
import type { RouteRules } from "./route";

/**
 * The billing state that applies to an organisation: its own, or for `parent` the first ancestor's
 * that is not itself `parent`. A chain that ends in `parent` has nobody paying: inactive.
 */
export function effectiveBilling(chain: Pick<Org, "billing">[]): Exclude<BillingState, "parent"> {
  for (const org of chain) if (org.billing !== "parent") return org.billing;
  return "inactive";
}

/** 402 billing_required while the subscription that pays for the tenant is inactive or canceled. */
export async function assertBilling(env: Pick<Env, "DIRECTORY">, org: Org): Promise<void> {
  const chain = org.billing === "parent" ? await directory(env.DIRECTORY).orgWithAncestors(org.id) : [org];
  const state = effectiveBilling(chain.length > 0 ? chain : [org]);
  if (state === "inactive" || state === "canceled") {
    const through = org.billing === "parent" ? " (billed through the parent organisation)" : "";
    throw new ProblemError("billing_required", `The subscription${through} is ${state}; activate billing to use this route.`);
  }
}

export function billingGate(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rules.billing) await assertBilling(c.env, c.get("tenant").org);
    return next();
  };
}

/** Seconds from `now` until the first instant of the next UTC month. */
export function secondsUntilNextUtcMonth(now = new Date()): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/**
 * The quota gate: 429 quota_exceeded (Retry-After until the next UTC month) when checking `items`
 * more items would take the month's count past the organisation's quota. Routes call it with the
 * number of items they are about to check; `monthlyQuota: null` means unlimited.
 */
export async function assertQuota(env: Pick<Env, "TENANT_GATE">, tenant: Pick<Tenant, "org">, items: number): Promise<void> {
  const quota = tenant.org.monthlyQuota;
  if (quota === null) return;
  const used = await tenantGate(env, tenant.org).monthTotal();
  if (used + items > quota) {
    throw new ProblemError(
      "quota_exceeded",
      `The monthly quota of ${quota} check items is used up (${used} checked this month, ${items} requested).`,
      { headers: { "Retry-After": String(secondsUntilNextUtcMonth()) } },
    );
  }
}

/** Counts checked items towards the month's usage, each item id once (safe under redelivery). */
export async function countUsage(env: Pick<Env, "TENANT_GATE">, org: Pick<Org, "id" | "region">, itemIds: string[]) {
  return tenantGate(env, org).countItems(itemIds);
}
