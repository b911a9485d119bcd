import { afterEach, describe, expect, it } from "vitest";
import { builtinDefaultPolicy, type Policy } from "../../src/domain/policy";
import {
  POLICY_CACHE_MAX_POLICIES,
  POLICY_CACHE_TTL_MS,
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

afterEach(() => setPolicyCacheClock(null));

describe("policy cache", () => {
  it("does not cache a list read before a publish that ended after it", async () => {
    const org = orgId();
    const r = slowReader();
    const inFlight = cachedLatestPolicies("us", org, true, r.read);
    forgetPolicies(org); // the publish committed while the read was in flight
    r.release([v("default", 1)]);
    expect(await inFlight).toEqual([v("default", 1)]);
    // The next read does not get the pre-publish list: it reads again.
    const again = cachedLatestPolicies("us", org, true, r.read);
    r.release([v("default", 2)]);
    expect(await again).toEqual([v("default", 2)]);
    expect(r.reads()).toBe(2);
  });

  it("caches a read that no publish overlapped, until it is POLICY_CACHE_TTL_MS old", async () => {
    let now = 1_000;
    setPolicyCacheClock(() => now);
    const org = orgId();
    const r = reader([v("default", 1)]);
    await cachedLatestPolicies("us", org, true, r.read);
    now += POLICY_CACHE_TTL_MS - 1;
    await cachedLatestPolicies("us", org, true, r.read);
    expect(r.reads()).toBe(1);
    now += 1;
    await cachedLatestPolicies("us", org, true, r.read);
    expect(r.reads()).toBe(2);
  });

  it("keeps an organisation's lists of different regions apart", async () => {
    const org = orgId();
    const us = reader([v("us-policy", 1)]);
    const eu = reader([v("eu-policy", 1)]);
    expect((await cachedLatestPolicies("us", org, true, us.read))[0].name).toBe("us-policy");
    expect((await cachedLatestPolicies("eu", org, true, eu.read))[0].name).toBe("eu-policy");
    expect((await cachedLatestPolicies("us", org, true, us.read))[0].name).toBe("us-policy");
    expect([us.reads(), eu.reads()]).toEqual([1, 1]);
    // A forget drops both.
    forgetPolicies(org);
    await cachedLatestPolicies("us", org, true, us.read);
    await cachedLatestPolicies("eu", org, true, eu.read);
    expect([us.reads(), eu.reads()]).toEqual([2, 2]);
  });

  it("reads without the cache when told not to use it, and refreshes the entry", async () => {
    const org = orgId();
    const first = reader([v("default", 1)]);
    await cachedLatestPolicies("us", org, true, first.read);
    const second = reader([v("default", 2)]);
    expect(await cachedLatestPolicies("us", org, false, second.read)).toEqual([v("default", 2)]);
    expect(await cachedLatestPolicies("us", org, true, first.read)).toEqual([v("default", 2)]);
    expect([first.reads(), second.reads()]).toEqual([1, 1]);
  });

  it("does not cache a list longer than POLICY_CACHE_MAX_POLICIES", async () => {
    const org = orgId();
    const long = reader(Array.from({ length: POLICY_CACHE_MAX_POLICIES + 1 }, (_, i) => v(`p${i}`, 1)));
    await cachedLatestPolicies("us", org, true, long.read);
    await cachedLatestPolicies("us", org, true, long.read);
    expect(long.reads()).toBe(2);
    const fits = reader(Array.from({ length: POLICY_CACHE_MAX_POLICIES }, (_, i) => v(`p${i}`, 1)));
    const other = orgId();
    await cachedLatestPolicies("us", other, true, fits.read);
    await cachedLatestPolicies("us", other, true, fits.read);
    expect(fits.reads()).toBe(1);
  });
});
