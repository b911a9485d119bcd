// The accuracy bench's error concentration (bench/lib/rates.ts): which writers carry the errors at the
// default approve threshold, so the development sets can be put beside the held-out report of issue 14.
import { describe, expect, it } from "vitest";
import { concentration } from "../../bench/lib/rates";
import type { Kind, Trial } from "../../bench/lib/trial";
import { DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";

const hi = DEFAULT_THRESHOLDS.approve + 0.05;
const lo = DEFAULT_THRESHOLDS.approve - 0.05;
const trial = (writer: string, kind: Kind, score: number): Trial => ({ writer, kind, score });

/** A writer with `g` genuine signatures of which `rejected` fall below approve, and `passed` skilled forgeries at or above it. */
function writer(id: string, g: number, rejected: number, passed = 0): Trial[] {
  return [
    ...Array.from({ length: g }, (_, i) => trial(id, "genuine", i < rejected ? lo : hi)),
    ...Array.from({ length: 4 }, (_, i) => trial(id, "skilled", i < passed ? hi : lo)),
    trial(id, "random", hi), // random forgeries are not part of this view
  ];
}

describe("concentration of errors at approve", () => {
  it("counts writers without any error and the share the worst writers carry", () => {
    const trials = [
      ...writer("a", 10, 9),
      ...writer("b", 10, 3),
      ...writer("c", 10, 0, 1), // no genuine rejected, but a forgery passed: it has an error
      ...writer("d", 10, 0),
      ...writer("e", 10, 0),
      ...writer("f", 10, 1),
    ];
    const c = concentration(trials, 2);
    expect(c.writers).toBe(6);
    expect(c.writersWithoutError).toBe(2);
    expect(c.worstFrr).toEqual([0.9, 0.3]);
    expect(c.worstShareOfRejected).toBeCloseTo(12 / 13, 10);
  });

  it("reports no share when nothing is rejected, and a score exactly at approve as accepted", () => {
    const t = DEFAULT_THRESHOLDS.approve;
    const c = concentration([trial("a", "genuine", t), trial("a", "skilled", t - 1e-9), trial("b", "genuine", 1)]);
    expect(c.writersWithoutError).toBe(2);
    expect(c.worstShareOfRejected).toBe(0);
    expect(c.worstFrr).toEqual([0, 0]);
  });
});
