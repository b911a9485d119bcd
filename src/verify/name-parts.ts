/**
 * Boxes that may be the words of one name. Without print on the page to measure a word gap by, the
 * locator cannot tell a name written in words with wide gaps (common in Bengali) from two signatures
 * side by side, and it keeps them apart: a merged box would compare two signers' ink with one signer's
 * references. The check can tell them apart, because it has the references: it also scores the union
 * of neighbouring boxes on one line and keeps the union where it matches better than each of its parts
 * (pipeline.ts, checkDocument). A second signer's ink beside the subject's should make the union match
 * worse than the subject's part alone; measured, no genuine signature beside another signer's was decided
 * on their union (docs/accuracy.md, "A name found in words").
 *
 * Pure: boxes in, runs of box indices out.
 */
import { overlaps, unionBox } from "./ink-mask";
import type { Box } from "./types";

/** Neighbours on one line at most this many box heights (the taller one's) apart are joined. */
export const RUN_GAP_HEIGHTS = 2;
/** Two boxes share a line when their vertical spans overlap by this share of the shorter one. */
export const LINE_OVERLAP = 0.5;
/** At most this many words make one name. */
export const MAX_RUN = 4;
/**
 * At most this many unions are scored per document (the budget `lineRuns` is given): each costs a crop at
 * full resolution, its quality, features and a comparison, about as much as one more signature.
 */
export const MAX_RUNS = 6;

export interface LineRun {
  /** Indices into the boxes given, left to right. */
  parts: number[];
  box: Box;
}

interface Placed {
  page: number;
  box: Box;
  /** The locator's confidence: where the budget runs short, runs holding surer boxes are scored first. */
  confidence: number;
}

/**
 * Runs of two to MAX_RUN boxes of one page, each next to the one before it on one line. Each box's
 * neighbour is the nearest box to its right that shares its line within the gap. A run whose union would
 * take in any part of a box outside it (one between its words, off their line) is not a name's words.
 * Shorter runs come first, then those holding the most confident box, then top to bottom and left to
 * right; at most `budget` are returned.
 */
export function lineRuns(boxes: readonly Placed[], budget = MAX_RUNS): LineRun[] {
  const next = boxes.map((a, i) => {
    let best = -1;
    let bestX = Infinity;
    for (let j = 0; j < boxes.length; j++) {
      const b = boxes[j];
      if (j === i || b.page !== a.page || b.box.x <= a.box.x) continue;
      if (!sameLine(a.box, b.box)) continue;
      const gap = b.box.x - (a.box.x + a.box.w);
      if (gap > RUN_GAP_HEIGHTS * Math.max(a.box.h, b.box.h)) continue;
      if (b.box.x < bestX) {
        bestX = b.box.x;
        best = j;
      }
    }
    return best;
  });
  const runs: LineRun[] = [];
  for (let len = 2; len <= MAX_RUN; len++) {
    for (let start = 0; start < boxes.length; start++) {
      const parts = [start];
      while (parts.length < len && next[parts[parts.length - 1]] >= 0) parts.push(next[parts[parts.length - 1]]);
      if (parts.length < len) continue;
      const box = unionBox(parts.map((p) => boxes[p].box));
      if (boxes.some((o, k) => !parts.includes(k) && o.page === boxes[start].page && overlaps(o.box, box))) continue;
      runs.push({ parts, box });
    }
  }
  const sure = (r: LineRun) => Math.max(...r.parts.map((p) => boxes[p].confidence));
  runs.sort((a, b) => a.parts.length - b.parts.length || sure(b) - sure(a) || a.box.y - b.box.y || a.box.x - b.box.x);
  return runs.slice(0, Math.max(0, budget));
}

function sameLine(a: Box, b: Box): boolean {
  const overlap = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return overlap >= LINE_OVERLAP * Math.min(a.h, b.h);
}

export interface RunChoice {
  /** The run joined, by its index in the runs given. */
  run: number;
  score: number;
}

/**
 * Which unions to keep: a run whose union scores above every one of its parts, the best first, each
 * part in at most one kept union. `partScores` are the parts' scores (null: not compared, unreadable),
 * `runScores` the unions' (null: not compared).
 */
export function chooseRuns(
  runs: readonly { parts: readonly number[] }[],
  partScores: readonly (number | null)[],
  runScores: readonly (number | null)[],
): RunChoice[] {
  const order = runs.map((_, i) => i).filter((i) => runScores[i] !== null);
  order.sort((a, b) => (runScores[b] ?? 0) - (runScores[a] ?? 0));
  const taken = new Set<number>();
  const chosen: RunChoice[] = [];
  for (const i of order) {
    const score = runScores[i] as number;
    const parts = runs[i].parts;
    if (parts.some((p) => taken.has(p))) continue;
    if (!parts.every((p) => score > (partScores[p] ?? 0))) continue;
    for (const p of parts) taken.add(p);
    chosen.push({ run: i, score });
  }
  return chosen;
}
