import { describe, expect, it } from "vitest";
import { TtlCache } from "../../src/util/ttl-cache";

describe("TtlCache", () => {
  it("answers a stored value until its time is up, then nothing", () => {
    let now = 1_000;
    const cache = new TtlCache<string>(30_000, 10, () => now);
    cache.set("k", "v");
    expect(cache.get("k")).toBe("v");
    now += 29_999;
    expect(cache.get("k")).toBe("v");
    now += 1;
    expect(cache.get("k")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("restarts an entry's time when it is stored again", () => {
    let now = 0;
    const cache = new TtlCache<number>(100, 10, () => now);
    cache.set("k", 1);
    now = 90;
    cache.set("k", 2);
    now = 150;
    expect(cache.get("k")).toBe(2);
  });

  it("holds at most maxEntries, dropping the oldest stored", () => {
    const cache = new TtlCache<number>(60_000, 3);
    for (const k of ["a", "b", "c"]) cache.set(k, 1);
    cache.set("a", 2); // refreshed: now the newest
    cache.set("d", 1);
    expect(cache.size).toBe(3);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe(2);
    expect(cache.get("c")).toBe(1);
    expect(cache.get("d")).toBe(1);
  });

  it("forgets one entry or all of them", () => {
    const cache = new TtlCache<number>(60_000, 10);
    cache.set("a", 1);
    cache.set("b", 2);
    cache.delete("a");
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("b")).toBe(2);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
