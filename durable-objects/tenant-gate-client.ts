import type { Env } from "../src/env";
import type { RegionName } from "../src/http/context";
import type { TenantGate } from "./tenant-gate";

/** The gate's name: one object per tenant and home region (its records stay in that region). */
export function tenantGateName(region: RegionName, orgId: string): string {
  return `${region}:${orgId}`;
}

/** The TenantGate stub of an organisation. */
export function tenantGate(env: Pick<Env, "TENANT_GATE">, org: { id: string; region: RegionName }): DurableObjectStub<TenantGate> {
  return env.TENANT_GATE.get(env.TENANT_GATE.idFromName(tenantGateName(org.region, org.id)));
}
