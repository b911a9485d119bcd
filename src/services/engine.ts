import type { Box } from "../verify/types";
import type { CheckedSignature } from "../verify/pipeline";
import type { Forgeability } from "../verify/forgeability";
import type { CheckPolicy } from "../domain/policy";
import type { RejectionReason } from "../domain/enrolment";
import type { Decision } from "../domain/policy-defaults";

/**
 * What enrolment and checks need from the verification core, as one seam: the routes and queue
 * consumers depend on this interface, and src/services/engine-live.ts binds it to src/verify.
 */
export interface EnrolmentAccepted {
  ok: true;
  /** Serialisable features of the located signature. */
  features: unknown;
  quality: { score: number; [figure: string]: unknown };
  page: number;
  box: Box;
}

export interface EnrolmentRejected {
  ok: false;
  reason: RejectionReason;
  detail: string;
}

export interface ReferenceModelBuild {
  /** JSON-serialisable model, stored in R2 and read by every check. */
  model: unknown;
  /** ref_ids the model flags as outliers (kept, but not trusted). */
  outliers: string[];
  /** How forgeable the subject is at the approve threshold asked for (src/verify/forgeability.ts); null when not asked. */
  forgeability: Forgeability | null;
}

export interface VerificationEngine {
  /**
   * Structural check of a file (format, page count, declared size) that also decodes its first page;
   * `pixels` is that page's width x height. Throws VerifyError.
   */
  inspect(bytes: Uint8Array): Promise<{ format: string; pages: number; pixels: number }>;
  /** Locates the signature on the first page that has one, judges quality, extracts features. */
  enrolReference(bytes: Uint8Array): Promise<EnrolmentAccepted | EnrolmentRejected>;
  /**
   * Builds the per-subject reference model from the live references' features; with `approveThreshold`
   * (the policy's approve threshold), also its forgeability estimate. A check's inline references need none.
   */
  buildModel(
    refs: { refId: string; features: unknown; learned?: boolean }[],
    opts?: { approveThreshold: number },
  ): Promise<ReferenceModelBuild>;
  /** A grey PNG of the first page, at most `maxSide` px on the long side. */
  thumbnail(bytes: Uint8Array, maxSide: number): Promise<Uint8Array>;
  /** The version of the features enrolReference extracts now (src/verify/features.ts FEATURE_VERSION). */
  readonly featureVersion: number;
  /**
   * Whether stored features (as enrolReference returned them) were extracted by this version of the core.
   * When not, they must be extracted again from the reference's file (services/feature-upgrade.ts):
   * features of another version cannot be compared with.
   */
  featuresCurrent(features: unknown): boolean;
  /** Whether a stored model (as buildModel returned it) was built by this version from features of this version throughout. */
  modelCurrent(model: unknown): boolean;
}

// ---- checks ----------------------------------------------------------------------------------

export interface CheckDocumentOptions {
  inputType?: string | null;
  /** `page` is 1-based; `box` in page pixels. */
  target?: { page?: number; box?: Box } | null;
  /** A form template's stored registration models, by 1-based blank page (see services/templates.ts). */
  templatePages?: Record<number, unknown> | null;
  /**
   * Render each located signature's crop PNG now (default true). The queue leaves it to the first read
   * of the crop (services/check-crops.ts), which renders it from the input and keeps it.
   */
  renderCrops?: boolean;
}

/**
 * A located signature as checks report it (index 0-based in reading order, page 1-based, box in page
 * pixels), with its calibrated similarity in [0, 1]; score null or absent when it was not compared.
 * `cut_off`: the box runs out of its page, so part of the signature may be missing from the comparison.
 */
export type ScoredSignature = Pick<CheckedSignature, "index" | "page" | "box" | "confidence" | "zone"> & {
  score?: number | null;
  cut_off: boolean;
};

export interface CheckQuality {
  score: number;
  cue: string;
  figures: Record<string, unknown>;
}

/** Progress of one check, in the order of spec 6.1 (the stream forwards them as events). */
export type CheckProgress =
  | { type: "quality"; quality: CheckQuality; page: number }
  | { type: "located"; signatures: ScoredSignature[] }
  | { type: "comparing"; referenceCount: number };

export interface CheckedDocument {
  decision: Decision;
  /** Calibrated score in [0, 1] of the best-matching signature; null when nothing was compared. */
  score: number | null;
  pages: number;
  quality: CheckQuality | null;
  signatures: ScoredSignature[];
  /** The signature that matched best and the reference it matched best. */
  best: { signatureIndex: number; refId: string; score: number } | null;
  /** Zones of the best signature that deviate most from that reference, in page pixels (deviation 1 = typical). */
  regions: { box: Box; deviation: number }[];
  /** Same order as `signatures`: grey PNG crops (8% padding, at most 640 px), when the engine renders them. */
  cropPngs?: Uint8Array[];
  /** With a template: for each page searched with it, whether the page registered to the blank. */
  registration?: { page: number; registered: boolean }[];
}

/** What checks need from the verification core, beside the enrolment methods above. */
export interface CheckEngine {
  /**
   * Checks a document against a reference model (as built by buildModel). `onEvent` is awaited after
   * each stage; it may throw to abandon the check (e.g. when the item's budget has run out).
   */
  checkDocument(
    bytes: Uint8Array,
    model: unknown,
    policy: CheckPolicy,
    opts: CheckDocumentOptions,
    onEvent?: (e: CheckProgress) => void | Promise<void>,
  ): Promise<CheckedDocument>;
  /** Grey PNG crop of a located signature: 8% padding, at most 640 px on the long side. */
  signatureCrop(bytes: Uint8Array, page: number, box: Box): Promise<Uint8Array>;
  /**
   * What a confirmed signature is learned from, as a grey PNG: the pixels the check's features were taken
   * from (a page's printed rules painted out unless the input was a bare signature image), at full
   * resolution, on a margin of paper as wide as signatureCrop's padding.
   */
  learnedCrop(bytes: Uint8Array, page: number, box: Box, inputType: string | null): Promise<Uint8Array>;
}
