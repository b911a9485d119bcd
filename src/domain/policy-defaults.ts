/**
 * The built-in default policy's decision rules. The score they apply to is the verification core's
 * calibrated score in [0, 1] (about the probability that the signature is the subject's own), so one
 * set of thresholds means the same for every subject.
 */
export const DEFAULT_THRESHOLDS = {
  /** score >= auto_approve: AUTO_APPROVE */
  auto_approve: 0.9,
  /** score >= approve: APPROVE */
  approve: 0.7,
  /** score >= flag: FLAG; below it: FAILED */
  flag: 0.4,
} as const;

/** Quality score below this floor: UNREADABLE. */
export const DEFAULT_QUALITY_FLOOR = 0.35;
export const DEFAULT_MIN_REFERENCES = 1;
/**
 * A confirmed item is learned only when its score reaches this bar, both in its check and against the
 * subject's anchors alone: by default, what the anchors alone would approve. bench:learning (docs/learning.md)
 * measured 0.8 against 0.7: 0.8 refused a fifth of genuine confirmations and closed only 45% of the
 * 3-to-10-anchor gap on one development set; 0.7 closes 56% and 71%, while a mistaken confirmation of a
 * skilled forgery still raises the FAR at approve by at most 0.35 point. 0.6 let more forgeries in.
 */
export const DEFAULT_LEARNING_MIN_SCORE = DEFAULT_THRESHOLDS.approve;

/** Every decision a check item can carry: the four score bands, then the two outcomes without a comparison. */
export const DECISIONS = ["AUTO_APPROVE", "APPROVE", "FLAG", "FAILED", "UNREADABLE", "NO_SIGNATURE"] as const;
export type Decision = (typeof DECISIONS)[number];

export function decide(
  score: number,
  t: { auto_approve: number; approve: number; flag: number } = DEFAULT_THRESHOLDS,
): Extract<Decision, "AUTO_APPROVE" | "APPROVE" | "FLAG" | "FAILED"> {
  if (score >= t.auto_approve) return "AUTO_APPROVE";
  if (score >= t.approve) return "APPROVE";
  if (score >= t.flag) return "FLAG";
  return "FAILED";
}
