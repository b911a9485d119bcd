import { describe, expect, it } from "vitest";
import type { Directory } from "../../src/storage/directory";
import { apiKeyRecord, forgetApiKey, forgetOrgs, orgChain } from "../../src/storage/directory-cache";

/** A directory whose next read waits until the test releases it with the value it should return. */
function slowDirectory() {
  let release: (v: unknown) => void = () => {};
  let reads = 0;
  const next = () =>
    new Promise((resolve) => {
      reads++;
      release = resolve;
    });
  const dir = { getApiKey: next, orgWithAncestors: next } as unknown as Directory;
  return { dir, release: (v: unknown) => release(v), reads: () => reads };
}

describe("directory cache and a change during a read", () => {
  it("does not cache a key record read before a revocation that ended after it", async () => {
    const d = slowDirectory();
    const record = { id: "key_race", revokedAt: null };
    const inFlight = apiKeyRecord(d.dir, "key_race", false);
    forgetApiKey("key_race"); // the revocation committed while the read was in flight
    d.release(record);
    expect(await inFlight).toEqual(record);
    // The next cached read does not get the pre-revocation record: it asks the directory.
    const again = apiKeyRecord(d.dir, "key_race", true);
    d.release(null);
    expect(await again).toBeNull();
    expect(d.reads()).toBe(2);
  });

  it("does not cache an organisation chain read before a suspension that ended after it", async () => {
    const d = slowDirectory();
    const chain = [{ id: "org_race", suspended: false }];
    const inFlight = orgChain(d.dir, "org_race", false);
    forgetOrgs();
    d.release(chain);
    await inFlight;
    const again = orgChain(d.dir, "org_race", true);
    const suspended = [{ id: "org_race", suspended: true }];
    d.release(suspended);
    expect(await again).toEqual(suspended);
    expect(d.reads()).toBe(2);
  });

  it("caches a read that no change overlapped", async () => {
    const d = slowDirectory();
    const record = { id: "key_calm", revokedAt: null };
    const first = apiKeyRecord(d.dir, "key_calm", false);
    d.release(record);
    await first;
    expect(await apiKeyRecord(d.dir, "key_calm", true)).toEqual(record);
    expect(d.reads()).toBe(1);
  });
});
