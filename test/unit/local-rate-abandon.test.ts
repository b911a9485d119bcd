import { describe, expect, it } from "vitest";
import { CALL_ABANDON_MS, LocalBucket } from "../../src/http/local-rate";

describe("a gate call that never answers", () => {
  it("is given up after CALL_ABANDON_MS: the next request makes its own call and carries the spends again", async () => {
    let clock = 1_000_000;
    const bucket = new LocalBucket("api", () => clock);
    const calls: { spent: number; want: number }[] = [];
    // The first call hangs for good (its request was cancelled); later ones answer at once.
    const settle = (spent: number, want: number) => {
      calls.push({ spent, want });
      if (calls.length === 1) return new Promise<never>(() => {});
      return Promise.resolve({ granted: want, tokens: 30, updatedAt: clock, retryAfterSeconds: 0 });
    };
    void bucket.take(settle, () => {}, false);
    await Promise.resolve();
    expect(calls).toHaveLength(1);

    // While the call is fresh, a second request waits on it rather than calling.
    let second: Promise<unknown> | null = bucket.take(settle, () => {}, false);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toHaveLength(1);

    // Past the bound, the waiting request gives up on it and asks the gate itself.
    clock += CALL_ABANDON_MS + 1;
    expect(await second).toEqual({ ok: true });
    second = null;
    expect(calls).toHaveLength(2);
    expect(calls[1].want).toBe(1);
    expect(bucket.idle).toBe(true);
  });
});
