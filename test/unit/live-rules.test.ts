import { describe, expect, it } from "vitest";
import { admitFrame, closeReason, nextDeadline } from "../../src/domain/live";

describe("the live frame-rate rule (5 per second), on an injected clock", () => {
  it("takes five frames in a second, refuses the sixth with the wait, and takes it once the window moves", () => {
    let taken: number[] = [];
    for (const t of [0, 100, 200, 300, 400]) {
      const r = admitFrame(taken, t);
      if (!r.ok) throw new Error(`frame at ${t} refused`);
      taken = r.taken;
    }
    expect(admitFrame(taken, 999)).toEqual({ ok: false, retryAfterMs: 1 });
    expect(admitFrame(taken, 500)).toEqual({ ok: false, retryAfterMs: 500 });
    const later = admitFrame(taken, 1000);
    expect(later.ok).toBe(true);
    if (later.ok) expect(later.taken).toEqual([100, 200, 300, 400, 1000]);
  });

  it("does not count refused frames, so a client sending 10 a second still gets 5 analysed", () => {
    let taken: number[] = [];
    let analysed = 0;
    for (let t = 0; t < 1000; t += 100) {
      const r = admitFrame(taken, t);
      if (r.ok) {
        taken = r.taken;
        analysed++;
      }
    }
    expect(analysed).toBe(5);
  });
});

describe("live close rules", () => {
  const timings = { idleMs: 60_000, maxMs: 600_000, recheckMs: 30_000 };
  it("closes idle connections after 60 s and every connection after 10 minutes", () => {
    expect(closeReason({ openedAt: 0, lastDataAt: 0 }, timings, 59_999)).toBeNull();
    expect(closeReason({ openedAt: 0, lastDataAt: 0 }, timings, 60_000)).toBe("idle");
    expect(closeReason({ openedAt: 0, lastDataAt: 599_000 }, timings, 600_000)).toBe("max_duration");
  });

  it("wakes for the first of idle, maximum and credential re-check", () => {
    expect(nextDeadline({ openedAt: 0, lastDataAt: 50_000, checkedAt: 0 }, timings)).toBe(30_000);
    expect(nextDeadline({ openedAt: 0, lastDataAt: 0, checkedAt: 45_000 }, timings)).toBe(60_000);
  });
});
