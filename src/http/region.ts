import type { Env } from "../env";
import { configOf } from "../config";
import type { RegionName } from "../domain/tenancy";

export const REGIONS: readonly RegionName[] = ["us", "eu"];

export function isRegion(s: string): s is RegionName {
  return (REGIONS as readonly string[]).includes(s);
}

/** Each region's own host name (REGION_HOSTS, validated by the Config). */
export function regionHosts(env: Env): Partial<Record<RegionName, string>> {
  return configOf(env).regionHosts;
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
