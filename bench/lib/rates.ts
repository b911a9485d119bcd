// The error rates every accuracy table reports: EER with one global threshold and with per-writer
// thresholds, and FAR/FRR at each of the default policy's thresholds (never tuned on the scored data).
import { DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { eer, ratesAt } from "./metrics";
import type { Trial } from "./protocol";

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
