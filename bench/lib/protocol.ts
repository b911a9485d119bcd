// The measuring protocol of verification.md: per writer, references = the first N genuine samples in index
// order (fewer when the writer has fewer, always leaving one genuine to question); questioned = the
// writer's other genuine samples, all its skilled forgeries, and for random forgeries one genuine sample
// (the last) of each of up to 20 other writers (the next ones in index order, wrapping round).
import type { Core } from "../../src/verify/core";
import type { ScoringParams } from "../../src/verify/calibration";
import { type Comparison, compareToModel } from "../../src/verify/compare";
import { buildReferenceModel, type ReferenceModel } from "../../src/verify/model";
import type { Sample, Writer } from "./dataset";
import type { Kind, Trial } from "./trial";

export const RANDOM_OTHERS = 20;

export function referencesOf(w: Writer, n: number): Sample[] {
  return w.genuine.slice(0, Math.max(1, Math.min(n, w.genuine.length - 1)));
}

export function questionedOf(w: Writer, n: number, pool: Writer[]): { sample: Sample; kind: Kind }[] {
  const refs = referencesOf(w, n).length;
  const out: { sample: Sample; kind: Kind }[] = [];
  for (const s of w.genuine.slice(refs)) out.push({ sample: s, kind: "genuine" });
  for (const s of w.forgeries) out.push({ sample: s, kind: "skilled" });
  const at = pool.findIndex((p) => p.id === w.id);
  const others = pool.filter((p) => p.id !== w.id);
  const start = at >= 0 ? at : 0;
  for (let i = 0; i < Math.min(RANDOM_OTHERS, others.length); i++) {
    const o = others[(start + i) % others.length];
    if (o.genuine.length > 0) out.push({ sample: o.genuine[o.genuine.length - 1], kind: "random" });
  }
  return out;
}

export function modelFor(core: Core, w: Writer, n: number, params: ScoringParams): ReferenceModel {
  return buildReferenceModel(
    core,
    referencesOf(w, n).map((s) => ({ refId: s.path, features: s.features, raster: s.raster })),
    params,
  );
}

/** How many questioned signatures of each kind compare.ts scored in the blurred and binarised regimes (stderr). */
export function regimeCounter() {
  const all: Record<string, number> = {};
  const other: Record<string, Record<string, number>> = { blurred: {}, binarised: {} };
  return {
    add(kind: string, regime: Comparison["regime"]) {
      all[kind] = (all[kind] ?? 0) + 1;
      if (regime) other[regime][kind] = (other[regime][kind] ?? 0) + 1;
    },
    log(label: string) {
      for (const [regime, n] of Object.entries(other)) {
        const parts = Object.keys(all).map((k) => `${k} ${n[k] ?? 0}/${all[k]} (${(((n[k] ?? 0) / all[k]) * 100).toFixed(1)}%)`);
        process.stderr.write(`  ${regime} regime ${label}: ${parts.join(", ")}\n`);
      }
    },
  };
}

/** Score every questioned sample of every writer through the production compare path. */
export function runProtocol(core: Core, writers: Writer[], pool: Writer[], n: number, params: ScoringParams): Trial[] {
  const trials: Trial[] = [];
  const switched = regimeCounter();
  for (const w of writers) {
    if (w.genuine.length < 2) continue;
    const model = modelFor(core, w, n, params);
    for (const q of questionedOf(w, n, pool)) {
      const c = compareToModel(core, q.sample.features, model, params);
      switched.add(q.kind, c.regime);
      trials.push({ writer: w.id, kind: q.kind, score: c.score });
    }
  }
  switched.log(`N=${n}`);
  return trials;
}
