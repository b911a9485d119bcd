/**
 * The entry bar a confirmed check item must clear before the service learns it as a reference
 * (docs/learning.md). Pure rules: the learning service gathers the facts, these decide.
 *
 * The bar runs in two stages so the costly part (extracting the candidate's features from the stored
 * crop) is done only for items that clear the cheap rules:
 *   recordRefusal(facts)        rules on the stored check and the subject's state
 *   (confirmRefusal(facts)      those of them already settled when the item is confirmed, applied then)
 *   candidateRefusal(candidate) rules on the signature the service would store
 */

export type RefusalReason =
  | "blocked"
  | "input_expired"
  | "no_signature"
  | "ambiguous_signature"
  | "low_quality"
  | "low_score"
  | "subject_changed"
  | "no_anchors"
  | "outlier";

export interface Refusal {
  reason: RefusalReason;
  detail: string;
}

/** Two signatures of one item whose scores lie closer than this are ambiguous: which one was confirmed? */
export const AMBIGUITY_MARGIN = 0.1;

/** The facts about a confirmed item as recorded by its check, and about the subject now. */
export interface RecordFacts {
  /** The source check was blocked by an unlearn. */
  blocked: boolean;
  /** The item's input and crops are still in the job's inbox. */
  inputAvailable: boolean;
  /** Scores of the located signatures (null: not compared). */
  signatureScores: (number | null)[];
  /** Index in signatureScores of the best match, or null. */
  bestSignature: number | null;
  /** The item's calibrated score. */
  score: number | null;
  /** The check's quality score of the input. */
  quality: number | null;
  policy: { quality_floor: number; min_score: number };
  /** Live anchors of the subject now. */
  anchors: number;
  /** How the subject changed since the check in a way that makes its score stale; null when it did not. */
  subjectChange: string | null;
}

/**
 * A learned signature may lie at most this far from the anchors (mean z of its distance to them against
 * the anchors' own statistics; 0 = a typical genuine signature, 1 = one spread further). Tighter than the
 * model's outlier bar for references (3), since nobody enrolled this one on purpose.
 */
export const LEARNING_OUTLIER_Z = 1.5;

/** The signature the service would learn, judged against the subject's anchors alone. */
export interface CandidateFacts {
  /** Quality score of the candidate signature itself. */
  quality: number;
  qualityFloor: number;
  /** Mean z of its distance to the anchors against the anchors' own statistics (0 = a typical genuine). */
  distanceToAnchors: number;
  /** Its calibrated score against the anchors alone (the check's score may have rested on learned references too). */
  anchorScore: number;
  minScore: number;
}

const INPUT_EXPIRED: Refusal = { reason: "input_expired", detail: "The item's input has expired from the job's inbox." };

/** The facts known when a reviewer confirms an item that no later state of the service can undo. */
export interface ConfirmFacts {
  /** The item's input and crops are still in the job's inbox. */
  inputAvailable: boolean;
  /** Signatures the check located. */
  signatures: number;
  /** The subject was deleted (or deleted and enrolled again) since the check; null when it was not. */
  subjectGone: string | null;
}

/**
 * The part of the bar a confirmation can be judged by at once: an item it refuses could never be learned,
 * so its confirmation is recorded with the refusal instead of being queued (docs/learning.md). The rest of
 * the bar runs in the consumer, on the subject as it is then.
 */
export function confirmRefusal(f: ConfirmFacts): Refusal | null {
  if (!f.inputAvailable) return INPUT_EXPIRED;
  if (f.signatures === 0) return { reason: "no_signature", detail: "The check located no signature." };
  if (f.subjectGone !== null) return { reason: "subject_changed", detail: f.subjectGone };
  return null;
}

export function recordRefusal(f: RecordFacts): Refusal | null {
  if (f.blocked) return { reason: "blocked", detail: "The source check was unlearned and is blocked from being learned again." };
  if (!f.inputAvailable) return INPUT_EXPIRED;
  if (f.signatureScores.length === 0 || f.bestSignature === null) {
    return { reason: "no_signature", detail: "The check located no signature that was compared." };
  }
  if (f.signatureScores.length > 1) {
    const best = f.signatureScores[f.bestSignature] ?? 0;
    const rival = f.signatureScores.some((s, i) => i !== f.bestSignature && s !== null && best - s < AMBIGUITY_MARGIN);
    if (rival) {
      return {
        reason: "ambiguous_signature",
        detail: `Several signatures were located and another scored within ${AMBIGUITY_MARGIN} of the best: which one was confirmed is unclear.`,
      };
    }
  }
  if (f.quality === null || f.quality < f.policy.quality_floor) {
    return {
      reason: "low_quality",
      detail: `The input's quality ${f.quality ?? "unknown"} is below the policy's floor ${f.policy.quality_floor}.`,
    };
  }
  if (f.score === null || f.score < f.policy.min_score) {
    return {
      reason: "low_score",
      detail: `The score ${f.score ?? "unknown"} is below the policy's learning.min_score ${f.policy.min_score}.`,
    };
  }
  if (f.subjectChange !== null) return { reason: "subject_changed", detail: f.subjectChange };
  if (f.anchors === 0) return { reason: "no_anchors", detail: "The subject has no live anchor to judge the signature by." };
  return null;
}

export function candidateRefusal(c: CandidateFacts): Refusal | null {
  if (c.quality < c.qualityFloor) {
    return { reason: "low_quality", detail: `The signature's own quality ${c.quality} is below the policy's floor ${c.qualityFloor}.` };
  }
  if (!(c.distanceToAnchors <= LEARNING_OUTLIER_Z)) {
    return {
      reason: "outlier",
      detail: `The signature lies ${round(c.distanceToAnchors)} spreads beyond a typical genuine one from the anchors (at most ${LEARNING_OUTLIER_Z} is learned).`,
    };
  }
  // Anchors stay in charge: learned references never vouch for further learned ones.
  if (!(c.anchorScore >= c.minScore)) {
    return {
      reason: "low_score",
      detail: `Against the anchors alone the signature scores ${round(c.anchorScore)}, below learning.min_score ${c.minScore}.`,
    };
  }
  return null;
}

/** Learned references kept per subject by default; the oldest learned goes first. */
export const DEFAULT_LEARNED_CAP = 20;

/** The ref_ids to evict so that at most `cap` learned references remain, oldest first (`learned` is oldest first). */
export function evictions(learned: readonly string[], cap: number): string[] {
  return learned.length > cap ? learned.slice(0, learned.length - cap) : [];
}

/**
 * The learned reference's id: `learned-<job_id>.<index>`, or a digest of the check id when that would
 * exceed the 128 characters of an identifier. The index follows the last dot, so the id is unique.
 */
export async function learnedRefId(jobId: string, index: number): Promise<string> {
  const plain = `learned-${jobId}.${index}`;
  if (plain.length <= 128) return plain;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${jobId}/${index}`));
  return `learned-${[...new Uint8Array(digest)]
    .slice(0, 16)
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")}`;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
