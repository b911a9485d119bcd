// The paired bootstrap that tells a real change of EER between two versions from the luck of the writers
// (bench/lib/paired-bootstrap.ts, used by bench/compare-scores.ts).
import { describe, expect, it } from "vitest";
import { eerInterval, pairedEerDifference } from "../../bench/lib/paired-bootstrap";
import { mulberry32 } from "../../bench/lib/rng";
import type { Trial } from "../../bench/lib/trial";

/** Writers whose genuine scores sit around 0.8 and forgeries around `forgery`, with per-writer noise. */
function run(writers: number, forgery: (w: number) => number, seed: number): Trial[] {
  const random = mulberry32(seed);
  const out: Trial[] = [];
  for (let w = 0; w < writers; w++) {
    const shift = (random() - 0.5) * 0.3;
    for (let i = 0; i < 10; i++) out.push({ writer: `w${w}`, kind: "genuine", score: 0.8 + shift + (random() - 0.5) * 0.4 });
    for (let i = 0; i < 10; i++) out.push({ writer: `w${w}`, kind: "skilled", score: forgery(w) + shift + (random() - 0.5) * 0.4 });
  }
  return out;
}

describe("paired bootstrap of EER over writers", () => {
  it("finds no difference between a run and itself", () => {
    const a = run(40, () => 0.5, 7);
    const d = pairedEerDifference(a, a, "skilled", 300);
    expect(d.delta).toBe(0);
    expect(d.low).toBe(0);
    expect(d.high).toBe(0);
    expect(d.bBetter).toBe(0.5);
  });

  it("puts a clear gain's whole interval below 0, and a tiny one's across it", () => {
    const a = run(40, () => 0.55, 7);
    // The same writers with every forgery scored 0.15 lower: fewer pass.
    const clear = a.map((t) => (t.kind === "skilled" ? { ...t, score: t.score - 0.15 } : t));
    const d = pairedEerDifference(a, clear, "skilled", 500);
    expect(d.delta).toBeLessThan(0);
    expect(d.high).toBeLessThan(0);
    expect(d.bBetter).toBeGreaterThan(0.97);
    // One writer's forgeries a little lower: within the luck of the writers.
    const tiny = a.map((t) => (t.kind === "skilled" && t.writer === "w3" ? { ...t, score: t.score - 0.05 } : t));
    const e = pairedEerDifference(a, tiny, "skilled", 500);
    expect(e.low).toBeLessThanOrEqual(0);
    expect(e.high).toBeGreaterThanOrEqual(0);
  });

  it("repeats exactly with the same seed, and refuses runs over different writers", () => {
    const a = run(30, () => 0.5, 3);
    const b = run(30, () => 0.45, 4);
    expect(pairedEerDifference(a, b, "skilled", 200, 9)).toEqual(pairedEerDifference(a, b, "skilled", 200, 9));
    expect(() =>
      pairedEerDifference(
        a,
        run(29, () => 0.5, 4),
        "skilled",
        10,
      ),
    ).toThrow(/different writers/);
  });

  it("gives one run's EER an interval that holds it and narrows with more writers", () => {
    const few = eerInterval(
      run(15, () => 0.55, 5),
      "skilled",
      400,
    );
    const many = eerInterval(
      run(240, () => 0.55, 5),
      "skilled",
      400,
    );
    for (const i of [few, many]) {
      expect(i.low).toBeLessThanOrEqual(i.eer);
      expect(i.high).toBeGreaterThanOrEqual(i.eer);
      expect(i.high).toBeGreaterThan(i.low);
    }
    // Sixteen times the writers: about a quarter of the width.
    expect(many.high - many.low).toBeLessThan(0.5 * (few.high - few.low));
    expect(
      eerInterval(
        run(15, () => 0.55, 5),
        "skilled",
        400,
      ),
    ).toEqual(few);
  });
});
