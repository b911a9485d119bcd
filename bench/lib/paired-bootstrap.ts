// Is one version's EER really lower than another's, or is the difference the luck of which writers the set
// holds? A paired bootstrap over writers: draw the scored set's writers with replacement, score both
// versions' comparisons of the drawn writers, and see how the difference of their EERs spreads. Writers,
// not comparisons, are drawn, since one writer's comparisons rise and fall together (one forger, one pen).
// The same draw over one run gives the interval an EER of a table carries (eerInterval).
import { eer } from "./metrics";
import { mulberry32 } from "./rng";
import type { Trial } from "./trial";

export interface PairedDifference {
  /** EER of A and of B on the whole set, and B - A. */
  a: number;
  b: number;
  delta: number;
  /** The 2.5th and 97.5th percentiles of B - A over the replicates. */
  low: number;
  high: number;
  /** Share of replicates in which B's EER is below A's (ties count half). */
  bBetter: number;
  replicates: number;
}

function byWriter(trials: Trial[], impostor: Trial["kind"]): Map<string, { g: number[]; i: number[] }> {
  const m = new Map<string, { g: number[]; i: number[] }>();
  for (const t of trials) {
    if (t.kind !== "genuine" && t.kind !== impostor) continue;
    let w = m.get(t.writer);
    if (!w) m.set(t.writer, (w = { g: [], i: [] }));
    (t.kind === "genuine" ? w.g : w.i).push(t.score);
  }
  return m;
}

/** The 2.5th and 97.5th percentiles of the replicates' values. */
function interval95(values: number[]): { low: number; high: number } {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { low: at(0.025), high: at(0.975) };
}

function eerOf(ws: { g: number[]; i: number[] }[]): number {
  return eer(
    ws.flatMap((w) => w.g),
    ws.flatMap((w) => w.i),
  );
}

/**
 * The EER of `b` against that of `a`, with genuine signatures against `impostor` ones, over the writers both
 * scored. Throws when they scored different writers: the comparison would not be paired.
 */
export function pairedEerDifference(a: Trial[], b: Trial[], impostor: "skilled" | "random", replicates = 2000, seed = 1): PairedDifference {
  const wa = byWriter(a, impostor);
  const wb = byWriter(b, impostor);
  const writers = [...wa.keys()].sort();
  if (writers.length !== wb.size || writers.some((w) => !wb.has(w))) throw new Error("the two runs scored different writers");
  const ea = eerOf(writers.map((w) => wa.get(w)!));
  const eb = eerOf(writers.map((w) => wb.get(w)!));
  const random = mulberry32(seed);
  const deltas: number[] = [];
  let better = 0;
  for (let r = 0; r < replicates; r++) {
    const drawn = writers.map(() => writers[Math.floor(random() * writers.length)]);
    const d = eerOf(drawn.map((w) => wb.get(w)!)) - eerOf(drawn.map((w) => wa.get(w)!));
    deltas.push(d);
    better += d < 0 ? 1 : d === 0 ? 0.5 : 0;
  }
  return { a: ea, b: eb, delta: eb - ea, ...interval95(deltas), bBetter: better / replicates, replicates };
}

export interface EerInterval {
  eer: number;
  /** The 2.5th and 97.5th percentiles of the EER over the replicates. */
  low: number;
  high: number;
  replicates: number;
}

/**
 * One run's EER with a 95% interval from a bootstrap over its writers: how far the figure could move on
 * another set of writers like these. Deterministic for a given seed.
 */
export function eerInterval(trials: Trial[], impostor: "skilled" | "random", replicates = 1000, seed = 1): EerInterval {
  const by = byWriter(trials, impostor);
  const writers = [...by.keys()].sort();
  const random = mulberry32(seed);
  const eers: number[] = [];
  for (let r = 0; r < replicates; r++) eers.push(eerOf(writers.map(() => by.get(writers[Math.floor(random() * writers.length)])!)));
  return { eer: eerOf(writers.map((w) => by.get(w)!)), ...interval95(eers), replicates };
}
