import type { Env } from "../env";
import type { RegionName } from "../domain/tenancy";

export const REGIONS: readonly RegionName[] = ["us", "eu"];

export function isRegion(s: string): s is RegionName {
  return (REGIONS as readonly string[]).includes(s);
}

const parsed = new Map<string, Record<string, string>>();

/** REGION_HOSTS parsed once per isolate (it is configuration, not request data). */
export function regionHosts(env: Env): Record<string, string> {
  let hosts = parsed.get(env.REGION_HOSTS);
  if (!hosts) {
    hosts = env.REGION_HOSTS ? (JSON.parse(env.REGION_HOSTS) as Record<string, string>) : {};
    parsed.set(env.REGION_HOSTS, hosts);
  }
  return hosts;
}

/** The region whose own address `host` is, or null for the global {base_url} (routed by key). */
export function regionOfHost(env: Env, host: string): RegionName | null {
  const name = host.toLowerCase().replace(/:\d+$/, "");
  for (const [region, h] of Object.entries(regionHosts(env))) {
    if (h.toLowerCase() === name && isRegion(region)) return region;
  }
  return null;
}

export function hostOfRegion(env: Env, region: RegionName): string | null {
  return regionHosts(env)[region] ?? null;
}
