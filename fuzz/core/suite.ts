/**
 * The fixed-seed subset `npm test` runs (test/integration/fuzz-subset.test.ts), and the quarantine of
 * cases that hit a defect still being fixed.
 *
 * PENDING_DEFECTS lists those defects with a predicate over a case. A pending case is left out of the
 * subset (it would hang workerd or fail until the fix merges) and is *not* counted, so the subset keeps
 * its size. Once its fix is in, delete its entry. `npm run fuzz -- --suite` runs the same subset in Node,
 * pending cases included, under the watchdog, and says which pending defects still fail.
 */
import { makeCase } from "./cases";
import type { FuzzCase, FuzzFormat, Seed } from "./types";

export const SUITE_SEED = 20261123;

/** Cases per format in the subset (about 1,000 in all). */
export const SUITE_CASES: Record<FuzzFormat, number> = { png: 220, jpeg: 220, tiff: 220, pdf: 220, multipart: 100 };

/** Generous bounds (ms) per case: a hang or a bomb is seconds to minutes, a healthy case milliseconds. */
export const SUITE_CASE_BOUND_MS = { decode: 5_000, worker: 15_000 };

export interface PendingDefect {
  id: string;
  /** Who fixes it and where. */
  owner: string;
  matches(c: FuzzCase): boolean;
}

/**
 * Defects a fuzz run found that are not fixed yet, each with the cases it covers; empty when none is
 * open. The three found while the decoders and the multipart parts were being hardened (unbounded TIFF
 * decompressors, PDF structure bombs, JSON parts sent as files) are fixed, and their cases run.
 */
export const PENDING_DEFECTS: PendingDefect[] = [];

export function pendingDefect(c: FuzzCase): PendingDefect | null {
  return PENDING_DEFECTS.find((d) => d.matches(c)) ?? null;
}

/**
 * The subset's cases of one format, in order: indexes 0, 1, 2... of the fixed seed, pending cases
 * skipped (and returned apart) until `SUITE_CASES[format]` enabled cases are found.
 */
export function suiteCases(
  corpus: Seed[],
  format: FuzzFormat,
  includePending = false,
): { cases: FuzzCase[]; pending: { c: FuzzCase; defect: PendingDefect }[] } {
  const cases: FuzzCase[] = [];
  const pending: { c: FuzzCase; defect: PendingDefect }[] = [];
  for (let i = 0; cases.length < SUITE_CASES[format] && i < SUITE_CASES[format] * 20; i++) {
    const c = makeCase(corpus, SUITE_SEED, i, [format]);
    const defect = pendingDefect(c);
    if (defect) {
      pending.push({ c, defect });
      if (!includePending) continue;
    }
    cases.push(c);
  }
  return { cases, pending };
}
