import type { Policy } from "../domain/policy";
import type { RegionName } from "../domain/tenancy";
import { TtlCache } from "../util/ttl-cache";

/**
 * The isolate's short-lived copy of each organisation's published policies (the latest version of each,
 * as listLatestPolicies reads them), for the reads that list or show them (`GET /sig/policies`,
 * `GET /sig/policies/{name}` without `?version`, through latestPoliciesForRead in policies.ts). See
 * docs/hot-path.md for the trade-off:
 *
 *   - only requests that may use the directory cache (reads under /sig/, mayUseDirectoryCache) use it;
 *     checks, sessions, live capture and every write read the region's database themselves, so a decision
 *     always applies the latest published policy;
 *   - a change made through this isolate (a publish, a region move's copy or delete) drops the
 *     organisation's entry at once; another isolate's copy is refreshed or expires within POLICY_CACHE_TTL_MS.
 */

/**
 * Ten seconds, the longest a list served on one isolate may lag behind a publish made through another
 * (a publish through this isolate drops the entry at once, and decisions never use the cache). Policies are
 * tenant data a person edits and then looks at, so this is a third of the directory records' 30 s; it is
 * still long enough that a tenant reading now and then is served from memory.
 */
export const POLICY_CACHE_TTL_MS = 10_000;
/**
 * An entry this old is still served, but the request that finds it reads the list again behind its response
 * (`background`, ExecutionContext.waitUntil). So a tenant that reads at least every
 * POLICY_CACHE_TTL_MS - POLICY_CACHE_REFRESH_AFTER_MS (2.5 s) on an isolate never waits for the database,
 * at the price of one background read per 7.5 s; an earlier refresh would read more often for a shorter
 * lag (measured with bench:api, docs/hot-path.md: background reads share the local runtime's CPU).
 */
export const POLICY_CACHE_REFRESH_AFTER_MS = 7_500;
/** Organisations whose lists one isolate holds; the oldest stored is dropped first. */
export const POLICY_CACHE_MAX_ENTRIES = 500;
/**
 * A list longer than this is not cached (such a tenant reads the database each time). A PolicySpec is a
 * fixed set of small members, so a policy is well under a kilobyte, and a full cache stays within about
 * POLICY_CACHE_MAX_ENTRIES * POLICY_CACHE_MAX_POLICIES kilobytes whatever tenants publish.
 */
export const POLICY_CACHE_MAX_POLICIES = 32;

let clock: () => number = Date.now;
const lists = new TtlCache<{ list: readonly Policy[]; readAt: number }>(POLICY_CACHE_TTL_MS, POLICY_CACHE_MAX_ENTRIES, () => clock());
/** Entries being read again in the background: one refresh per entry at a time. */
const refreshing = new Set<string>();
/**
 * Bumped by every forget: a read that began before a publish and ends after it may have read the old
 * list, and must not put it back into the cache (the same guard as directory-cache.ts).
 */
let generation = 0;

/** The data lives in the region's database: an entry names both, so a moved organisation never hits the other region's list. */
function entryKey(region: RegionName, orgId: string): string {
  return `${region}/${orgId}`;
}

/** The regions an organisation's entries may be under (RegionName's members). */
const REGIONS: readonly RegionName[] = ["us", "eu"];

export interface PolicyCacheUse {
  /** False: read the database (and refresh the entry); the caller is not a read that may use the cache. */
  mayUseCache: boolean;
  /** Keeps a background refresh alive after the response (ExecutionContext.waitUntil). */
  background(work: Promise<unknown>): void;
}

/**
 * The organisation's latest policies (what `read` answers: listLatestPolicies of the region's database),
 * from the cache when `use.mayUseCache` and present, else read (then cached, when short enough). The list
 * is shared by every request served from it, so callers treat it as read-only.
 */
export async function cachedLatestPolicies(
  region: RegionName,
  orgId: string,
  use: PolicyCacheUse,
  read: () => Promise<Policy[]>,
): Promise<readonly Policy[]> {
  const key = entryKey(region, orgId);
  if (use.mayUseCache) {
    const hit = lists.get(key);
    if (hit) {
      if (clock() - hit.readAt >= POLICY_CACHE_REFRESH_AFTER_MS && !refreshing.has(key)) {
        refreshing.add(key);
        use.background(
          readAndStore(key, read)
            // A failed refresh leaves the entry to expire; the next request after that reads in the foreground.
            .catch(() => {})
            .finally(() => refreshing.delete(key)),
        );
      }
      return hit.list;
    }
  }
  return readAndStore(key, read);
}

async function readAndStore(key: string, read: () => Promise<Policy[]>): Promise<readonly Policy[]> {
  const seen = generation;
  const readAt = clock();
  const list = await read();
  if (seen !== generation) return list;
  if (list.length <= POLICY_CACHE_MAX_POLICIES) lists.set(key, { list, readAt });
  else lists.delete(key);
  return list;
}

/** The organisation's policies changed (published, copied to or deleted from a region): its lists are dropped. */
export function forgetPolicies(orgId: string): void {
  generation++;
  for (const region of REGIONS) lists.delete(entryKey(region, orgId));
}

/** How many organisations' lists the cache holds (tests and diagnostics). */
export function policyCacheSize(): number {
  return lists.size;
}

/**
 * Replaces the cache's clock (tests: an entry's age is then set, not waited for); null restores Date.now.
 * Only the expiry of entries reads it.
 */
export function setPolicyCacheClock(now: (() => number) | null): void {
  clock = now ?? Date.now;
}
