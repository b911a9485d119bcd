// The error rates every accuracy table reports: EER with one global threshold and with per-writer
// thresholds, and FAR/FRR at each of the default policy's thresholds (never tuned on the scored data).
import { DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { eer, ratesAt } from "./metrics";
import type { Trial } from "./trial";

export interface Rates {
  eer_global: number;
  eer_writer: number;
  /** At the default `approve` threshold. */
  far: number;
  frr: number;
  at: Record<string, { far: number; frr: number }>;
}

export function rates(trials: Trial[], impostor: "skilled" | "random"): Rates {
  const gen = trials.filter((t) => t.kind === "genuine").map((t) => t.score);
  const imp = trials.filter((t) => t.kind === impostor).map((t) => t.score);
  const writers = [...new Set(trials.map((t) => t.writer))];
  const perWriter = writers
    .map((w) =>
      eer(
        trials.filter((t) => t.writer === w && t.kind === "genuine").map((t) => t.score),
        trials.filter((t) => t.writer === w && t.kind === impostor).map((t) => t.score),
      ),
    )
    .filter((e) => !Number.isNaN(e));
  const at: Rates["at"] = {};
  for (const [name, t] of Object.entries(DEFAULT_THRESHOLDS)) at[name] = ratesAt(gen, imp, t);
  return {
    eer_global: eer(gen, imp),
    eer_writer: perWriter.reduce((s, v) => s + v, 0) / Math.max(1, perWriter.length),
    far: at.approve.far,
    frr: at.approve.frr,
    at,
  };
}

export const pct = (v: number): string => `${(100 * v).toFixed(1).padStart(5)}%`;

/**
 * How the errors at the default `approve` threshold spread over writers: the held-out report of issue 14
 * found them concentrated (at N = 10, 32 of 55 writers without any error, five writers carrying most of the
 * rejected genuine signatures), and this puts the development sets beside it. A writer "has an error" when
 * one of its genuine signatures falls below approve or one of its skilled forgeries reaches it.
 */
export interface Concentration {
  writers: number;
  writersWithoutError: number;
  /** FRR at approve of the five writers with the most rejected genuine signatures, highest first. */
  worstFrr: number[];
  /** Share of all rejected genuine signatures that those five writers carry. */
  worstShareOfRejected: number;
}

export function concentration(trials: Trial[], worst = 5): Concentration {
  const t = DEFAULT_THRESHOLDS.approve;
  const byWriter = new Map<string, { genuine: number; rejected: number; skilledPassed: number }>();
  for (const tr of trials) {
    const w = byWriter.get(tr.writer) ?? { genuine: 0, rejected: 0, skilledPassed: 0 };
    if (tr.kind === "genuine") {
      w.genuine++;
      if (tr.score < t) w.rejected++;
    } else if (tr.kind === "skilled" && tr.score >= t) w.skilledPassed++;
    byWriter.set(tr.writer, w);
  }
  const all = [...byWriter.values()];
  const rejected = all.reduce((s, w) => s + w.rejected, 0);
  const top = [...all].sort((a, b) => b.rejected - a.rejected || b.genuine - a.genuine).slice(0, worst);
  return {
    writers: all.length,
    writersWithoutError: all.filter((w) => w.rejected === 0 && w.skilledPassed === 0).length,
    worstFrr: top.map((w) => (w.genuine > 0 ? w.rejected / w.genuine : 0)).sort((a, b) => b - a),
    worstShareOfRejected: rejected > 0 ? top.reduce((s, w) => s + w.rejected, 0) / rejected : 0,
  };
}
