/**
 * The fixed-seed subset `npm test` runs (test/integration/fuzz-subset.test.ts), and the switch for the
 * cases that hit defects being fixed on other branches.
 *
 * PENDING_DEFECTS lists those defects with a predicate over a case. A pending case is left out of the
 * subset (it would hang workerd or fail until the fix merges) and is *not* counted, so the subset keeps
 * its size. To enable a defect's cases after its fix merges, delete its entry (or set
 * FUZZ_ENFORCE_ALL = true to enable every one). `npm run fuzz -- --suite` runs the same subset in Node,
 * pending cases included, under the watchdog, and says which pending defects still fail.
 */
import { makeCase } from "./cases";
import type { FuzzCase, FuzzFormat, Seed } from "./types";

export const SUITE_SEED = 20261123;

/** Cases per format in the subset (about 1,000 in all). */
export const SUITE_CASES: Record<FuzzFormat, number> = { png: 220, jpeg: 220, tiff: 220, pdf: 220, multipart: 100 };

/** Generous bounds (ms) per case: a hang or a bomb is seconds to minutes, a healthy case milliseconds. */
export const SUITE_CASE_BOUND_MS = { decode: 5_000, worker: 15_000 };

/** true: run every case, pending or not (after all the fixes below have merged). */
export const FUZZ_ENFORCE_ALL = false;

export interface PendingDefect {
  id: string;
  /** Who fixes it and where. */
  owner: string;
  matches(c: FuzzCase): boolean;
}

/** The document's seed kind and edits, for a document case or the document inside a multipart case. */
function doc(c: FuzzCase): { kind: string; edits: string } {
  return { kind: c.seed.replace(/^multipart\/\w+:/, ""), edits: c.mutations.filter((m) => !m.startsWith("multipart:")).join(" ") };
}

export const PENDING_DEFECTS: PendingDefect[] = [
  {
    id: "tiff-unbounded-decompressors",
    owner: "TIFF hardening (src/verify/decode/tiff.ts): utif2's LZW, PackBits, CCITT 1D/G3 and tile paths without work bounds or strip checks",
    // Pages that reach utif2's decompressors: LZW, PackBits and tiled seeds, and any edit that sets a
    // compression other than none (1), G4 (4) or Deflate (8, measured before utif2 sees it).
    matches: (c) => {
      const d = doc(c);
      return d.kind.startsWith("tiff/") && (/lzw|packbits|tiles/.test(d.kind) || /compression\((?!(1|4|8)\))\d+\)/.test(d.edits));
    },
  },
  {
    id: "pdf-structure-bombs",
    owner: "PDF hardening (src/verify/decode/pdf.ts, pdf-guard.ts): object-stream bombs behind filter chains or hex-escaped names, and pdf-lib's unbounded work on load",
    matches: (c) => {
      const d = doc(c);
      // Bombs in object streams (the guard misses chains and escaped names) and a huge xref /Size, which
      // pdf-lib believes (seconds and over 128 MB on load).
      return d.kind.startsWith("pdf/") && /objstm-bomb|xref-damage\(size=/.test(d.edits);
    },
  },
  {
    id: "multipart-json-file-part",
    owner: "HTTP hardening (src/http/multipart.ts and the check route): a JSON part sent as a file typed JSON is refused with 400",
    matches: (c) => c.format === "multipart" && c.mutations.some((m) => /^multipart:json-as-(file|blob)/.test(m)),
  },
];

export function pendingDefect(c: FuzzCase): PendingDefect | null {
  if (FUZZ_ENFORCE_ALL) return null;
  return PENDING_DEFECTS.find((d) => d.matches(c)) ?? null;
}

/**
 * The subset's cases of one format, in order: indexes 0, 1, 2... of the fixed seed, pending cases
 * skipped (and returned apart) until `SUITE_CASES[format]` enabled cases are found.
 */
export function suiteCases(corpus: Seed[], format: FuzzFormat, includePending = false): { cases: FuzzCase[]; pending: { c: FuzzCase; defect: PendingDefect }[] } {
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
