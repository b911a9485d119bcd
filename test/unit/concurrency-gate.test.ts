import { describe, expect, it } from "vitest";
import { concurrencyGate, mapLimited } from "../../src/util/map-limited";

const tick = () => new Promise((r) => setTimeout(r, 1));

describe("concurrency gate", () => {
  it("runs at most `limit` at once, admits waiters in call order, and frees a slot when a call throws", async () => {
    const gate = concurrencyGate(2);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const run = (n: number, fail = false) =>
      gate(async () => {
        started.push(n);
        active++;
        peak = Math.max(peak, active);
        await tick();
        active--;
        if (fail) throw new Error(`call ${n} failed`);
        return n;
      });
    const results = await Promise.allSettled([run(0), run(1, true), run(2), run(3, true), run(4), run(5)]);
    expect(peak).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    // Every slot came back: a new call runs at once.
    expect(await gate(async () => "free")).toBe("free");
  });

  it("maps every item in input order with at most `limit` in flight", async () => {
    let active = 0;
    let peak = 0;
    const out = await mapLimited([5, 4, 3, 2, 1], 3, async (x, n) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, x));
      active--;
      return x * 10 + n;
    });
    expect(out).toEqual([50, 41, 32, 23, 14]);
    expect(peak).toBe(3);
  });

  it("mapLimited: after a failure starts nothing new, and rejects only when every started call has ended", async () => {
    const ended: number[] = [];
    const started: number[] = [];
    const slow = new Set([0, 2]);
    const run = mapLimited([0, 1, 2, 3, 4, 5], 3, async (n) => {
      started.push(n);
      await new Promise((r) => setTimeout(r, slow.has(n) ? 30 : 1));
      ended.push(n);
      if (n === 1) throw new Error("put 1 failed");
      return n;
    });
    await expect(run).rejects.toThrow("put 1 failed");
    // 0 and 2 were in flight when 1 failed: both ended before the rejection; 3 to 5 never started.
    expect(started).toEqual([0, 1, 2]);
    expect(ended.sort()).toEqual([0, 1, 2]);
  });
});
