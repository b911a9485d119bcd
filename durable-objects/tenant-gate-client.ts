import type { Env } from "../src/env";
import type { RegionName } from "../src/domain/tenancy";
import type { TenantGate } from "./tenant-gate";

/** The gate's name: one object per tenant and home region (its records stay in that region). */
export function tenantGateName(region: RegionName, orgId: string): string {
  return `${region}:${orgId}`;
}

/** The TenantGate stub of an organisation. */
export function tenantGate(env: Pick<Env, "TENANT_GATE">, org: { id: string; region: RegionName }): DurableObjectStub<TenantGate> {
  return env.TENANT_GATE.get(env.TENANT_GATE.idFromName(tenantGateName(org.region, org.id)));
}

/**
 * Carries a tenant's usage counters and idempotency records to its gate in the new region (call it
 * while the organisation is marked as moving, before the move completes). Safe to repeat.
 */
export async function moveTenantGate(env: Pick<Env, "TENANT_GATE">, orgId: string, from: RegionName, to: RegionName): Promise<void> {
  const state = await tenantGate(env, { id: orgId, region: from }).exportState();
  await tenantGate(env, { id: orgId, region: to }).importState(state);
}
