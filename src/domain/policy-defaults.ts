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
/** A confirmed item is learned only when its score reaches this bar. */
export const DEFAULT_LEARNING_MIN_SCORE = 0.8;

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
