import type { Org } from "../domain/tenancy";
import { TtlCache } from "../util/ttl-cache";
import type { ApiKeyRecord, Directory } from "./directory";

/**
 * The isolate's short-lived copy of what every authenticated read looks up in the global directory: API
 * key records (by key id; the secret is still hashed and compared on every request) and organisations
 * with their ancestors. The directory lives in one place; a read served from here makes no round trip
 * to it. See docs/hot-path.md for the trade-off:
 *
 *   - only reads (GET/HEAD with an API key or a dashboard token) use a cached entry; every other request
 *     reads the directory and refreshes the entry, so a write never acts on a stale record;
 *   - a change made through this isolate (revoking a key, suspending, billing, moving, settings, pinned
 *     version) drops the entries at once (Directory's mutators call forget*); another isolate's copy
 *     expires within DIRECTORY_CACHE_TTL_MS.
 */
export const DIRECTORY_CACHE_TTL_MS = 30_000;
/** Entries per cache: a few hundred bytes each, so a full cache is well under a megabyte. */
export const DIRECTORY_CACHE_MAX_ENTRIES = 2_000;

const keys = new TtlCache<ApiKeyRecord>(DIRECTORY_CACHE_TTL_MS, DIRECTORY_CACHE_MAX_ENTRIES);
/**
 * Bumped by every forget: a directory read that began before a change (a revocation, a suspension)
 * may end after it, and must not put what it read back into the cache.
 */
let generation = 0;
const chains = new TtlCache<Org[]>(DIRECTORY_CACHE_TTL_MS, DIRECTORY_CACHE_MAX_ENTRIES);

/** The key record, from the cache when `mayUseCache` and present, else from the directory (then cached). */
export async function apiKeyRecord(dir: Directory, keyId: string, mayUseCache: boolean): Promise<ApiKeyRecord | null> {
  if (mayUseCache) {
    const hit = keys.get(keyId);
    if (hit) return hit;
  }
  const seen = generation;
  const key = await dir.getApiKey(keyId);
  if (seen !== generation) return key;
  // Unknown ids are not cached: a key minted a moment later must work at once.
  if (key) keys.set(keyId, key);
  else keys.delete(keyId);
  return key;
}

/** The organisation and its ancestors (orgWithAncestors), cached like apiKeyRecord. */
export async function orgChain(dir: Directory, orgId: string, mayUseCache: boolean): Promise<Org[]> {
  if (mayUseCache) {
    const hit = chains.get(orgId);
    if (hit) return hit;
  }
  const seen = generation;
  const chain = await dir.orgWithAncestors(orgId);
  if (seen !== generation) return chain;
  if (chain.length > 0) chains.set(orgId, chain);
  else chains.delete(orgId);
  return chain;
}

/** A key changed (revoked): its cached record is dropped. */
export function forgetApiKey(keyId: string): void {
  generation++;
  keys.delete(keyId);
}

/**
 * An organisation changed. Every cached chain that contains it would be stale (a suspended parent
 * suspends its descendants), and changes are rare, so all chains are dropped.
 */
export function forgetOrgs(): void {
  generation++;
  chains.clear();
}

/** How many entries each cache holds (tests and diagnostics). */
export function directoryCacheSizes(): { keys: number; chains: number } {
  return { keys: keys.size, chains: chains.size };
}
