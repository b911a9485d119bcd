import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinDefaultPolicy, type Policy } from "../../src/domain/policy";
import {
  POLICY_CACHE_MAX_POLICIES,
  POLICY_CACHE_REFRESH_AFTER_MS,
  POLICY_CACHE_TTL_MS,
  type PolicyCacheUse,
  cachedLatestPolicies,
  forgetPolicies,
  setPolicyCacheClock,
} from "../../src/storage/policy-cache";

/** A reader whose next read waits until the test releases it with the list it should return. */
function slowReader() {
  let release: (v: Policy[]) => void = () => {};
  let reads = 0;
  const read = () =>
    new Promise<Policy[]>((resolve) => {
      reads++;
      release = resolve;
    });
  return { read, release: (v: Policy[]) => release(v), reads: () => reads };
}

/** A reader that answers `list` at once and counts its reads. */
function reader(list: Policy[]) {
  let reads = 0;
  return {
    read: async () => {
      reads++;
      return list;
    },
    reads: () => reads,
  };
}

const v = (name: string, version: number): Policy => ({ ...builtinDefaultPolicy("2026-01-01T00:00:00Z"), name, version, builtin: false });
let n = 0;
const orgId = () => `org_unit_policy_cache_${++n}`;

/** A read that may use the cache; background refreshes are collected so the test can await them. */
function cached(): PolicyCacheUse & { refreshes: Promise<unknown>[] } {
  const refreshes: Promise<unknown>[] = [];
  return { mayUseCache: true, background: (work) => refreshes.push(work), refreshes };
}
const UNCACHED: PolicyCacheUse = { mayUseCache: false, background: () => {} };

let now = 1_000;

/** An organisation whose cached list (default, version 1) is just due for a background refresh, and its slow reader. */
async function dueForRefresh() {
  const org = orgId();
  const r = slowReader();
  const first = cachedLatestPolicies("us", org, cached(), r.read);
  r.release([v("default", 1)]);
  await first;
  now += POLICY_CACHE_REFRESH_AFTER_MS;
  return { org, r };
}

beforeEach(() => {
  now = 1_000;
  setPolicyCacheClock(() => now);
});
afterEach(() => setPolicyCacheClock(null));

describe("policy cache", () => {
  it("does not cache a list read before a publish that ended after it", async () => {
    const org = orgId();
    const r = slowReader();
    const inFlight = cachedLatestPolicies("us", org, cached(), r.read);
    forgetPolicies(org); // the publish committed while the read was in flight
    r.release([v("default", 1)]);
    expect(await inFlight).toEqual([v("default", 1)]);
    // The next read does not get the pre-publish list: it reads again.
    const again = cachedLatestPolicies("us", org, cached(), r.read);
    r.release([v("default", 2)]);
    expect(await again).toEqual([v("default", 2)]);
    expect(r.reads()).toBe(2);
  });

  it("caches a read that no publish overlapped, until it is POLICY_CACHE_TTL_MS old when no refresh happened", async () => {
    const org = orgId();
    const r = reader([v("default", 1)]);
    await cachedLatestPolicies("us", org, cached(), r.read);
    now += POLICY_CACHE_REFRESH_AFTER_MS - 1;
    await cachedLatestPolicies("us", org, cached(), r.read);
    expect(r.reads()).toBe(1);
    // No request came between the refresh age and the TTL: the entry expired, and this read waits for the database.
    now += POLICY_CACHE_TTL_MS - POLICY_CACHE_REFRESH_AFTER_MS + 1;
    await cachedLatestPolicies("us", org, cached(), r.read);
    expect(r.reads()).toBe(2);
  });

  it("keeps an organisation's lists of different regions apart", async () => {
    const org = orgId();
    const us = reader([v("us-policy", 1)]);
    const eu = reader([v("eu-policy", 1)]);
    expect((await cachedLatestPolicies("us", org, cached(), us.read))[0].name).toBe("us-policy");
    expect((await cachedLatestPolicies("eu", org, cached(), eu.read))[0].name).toBe("eu-policy");
    expect((await cachedLatestPolicies("us", org, cached(), us.read))[0].name).toBe("us-policy");
    expect([us.reads(), eu.reads()]).toEqual([1, 1]);
    // A forget drops both.
    forgetPolicies(org);
    await cachedLatestPolicies("us", org, cached(), us.read);
    await cachedLatestPolicies("eu", org, cached(), eu.read);
    expect([us.reads(), eu.reads()]).toEqual([2, 2]);
  });

  it("reads without the cache when told not to use it, and refreshes the entry", async () => {
    const org = orgId();
    const first = reader([v("default", 1)]);
    await cachedLatestPolicies("us", org, cached(), first.read);
    const second = reader([v("default", 2)]);
    expect(await cachedLatestPolicies("us", org, UNCACHED, second.read)).toEqual([v("default", 2)]);
    expect(await cachedLatestPolicies("us", org, cached(), first.read)).toEqual([v("default", 2)]);
    expect([first.reads(), second.reads()]).toEqual([1, 1]);
  });

  it("does not cache a list longer than POLICY_CACHE_MAX_POLICIES", async () => {
    const org = orgId();
    const long = reader(Array.from({ length: POLICY_CACHE_MAX_POLICIES + 1 }, (_, i) => v(`p${i}`, 1)));
    await cachedLatestPolicies("us", org, cached(), long.read);
    await cachedLatestPolicies("us", org, cached(), long.read);
    expect(long.reads()).toBe(2);
    const fits = reader(Array.from({ length: POLICY_CACHE_MAX_POLICIES }, (_, i) => v(`p${i}`, 1)));
    const other = orgId();
    await cachedLatestPolicies("us", other, cached(), fits.read);
    await cachedLatestPolicies("us", other, cached(), fits.read);
    expect(fits.reads()).toBe(1);
  });

  it("serves an entry past POLICY_CACHE_REFRESH_AFTER_MS and reads it again once, in the background", async () => {
    const { org, r } = await dueForRefresh();
    const use = cached();
    // Answered at once from the entry; the refresh runs behind it.
    expect(await cachedLatestPolicies("us", org, use, r.read)).toEqual([v("default", 1)]);
    expect(use.refreshes).toHaveLength(1);
    expect(r.reads()).toBe(2);
    // A second request while the refresh is in flight starts no other.
    const meanwhile = cached();
    expect(await cachedLatestPolicies("us", org, meanwhile, r.read)).toEqual([v("default", 1)]);
    expect(meanwhile.refreshes).toHaveLength(0);

    r.release([v("default", 2)]);
    await Promise.all(use.refreshes);
    // The refreshed entry is served, and is young again: past the old entry's TTL it is still a hit (the
    // slow reader is not released, so a foreground read would never answer).
    now += POLICY_CACHE_REFRESH_AFTER_MS;
    expect(2 * POLICY_CACHE_REFRESH_AFTER_MS).toBeGreaterThan(POLICY_CACHE_TTL_MS);
    const later = cached();
    expect(await cachedLatestPolicies("us", org, later, r.read)).toEqual([v("default", 2)]);
    // ...and, being POLICY_CACHE_REFRESH_AFTER_MS old itself, it starts the next refresh.
    expect(later.refreshes).toHaveLength(1);
  });

  it("does not store a background refresh that a publish overlapped", async () => {
    const { org, r } = await dueForRefresh();
    const use = cached();
    await cachedLatestPolicies("us", org, use, r.read);
    forgetPolicies(org); // published on this isolate while the refresh read
    r.release([v("default", 1)]);
    await Promise.all(use.refreshes);
    const next = cachedLatestPolicies("us", org, cached(), r.read);
    r.release([v("default", 2)]);
    expect(await next).toEqual([v("default", 2)]);
    expect(r.reads()).toBe(3);
  });

  it("lets a failed background refresh go, and the entry still expires at its TTL", async () => {
    const org = orgId();
    await cachedLatestPolicies("us", org, cached(), async () => [v("default", 1)]);
    now += POLICY_CACHE_REFRESH_AFTER_MS;
    const use = cached();
    await cachedLatestPolicies("us", org, use, async () => {
      throw new Error("D1 unavailable");
    });
    await Promise.all(use.refreshes);
    now += POLICY_CACHE_TTL_MS - POLICY_CACHE_REFRESH_AFTER_MS;
    expect(await cachedLatestPolicies("us", org, cached(), async () => [v("default", 2)])).toEqual([v("default", 2)]);
  });
});
