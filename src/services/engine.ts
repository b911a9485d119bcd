import type { Box } from "../verify/types";
import type { RejectionReason } from "../domain/enrolment";

/**
 * What enrolment and checks need from the verification core, as one seam: the routes and queue
 * consumers depend on this interface, and src/services/engine-live.ts binds it to src/verify.
 */
export interface EnrolledReference {
  ok: true;
  /** Serialisable features of the located signature. */
  features: unknown;
  quality: { score: number; [figure: string]: unknown };
  page: number;
  box: Box;
}

export interface RejectedReference {
  ok: false;
  reason: RejectionReason;
  detail: string;
}

export interface ReferenceModelBuild {
  /** JSON-serialisable model, stored in R2 and read by every check. */
  model: unknown;
  /** ref_ids the model flags as outliers (kept, but not trusted). */
  outliers: string[];
}

export interface VerificationEngine {
  /** Cheap structural check of a file (format, page count, declared size); throws VerifyError. */
  inspect(bytes: Uint8Array): Promise<{ format: string; pages: number }>;
  /** Locates the signature on the first page that has one, judges quality, extracts features. */
  enrolReference(bytes: Uint8Array): Promise<EnrolledReference | RejectedReference>;
  /** Builds the per-subject reference model from the live references' features. */
  buildModel(refs: { refId: string; features: unknown }[]): Promise<ReferenceModelBuild>;
  /** A grey PNG of the first page, at most `maxSide` px on the long side. */
  thumbnail(bytes: Uint8Array, maxSide: number): Promise<Uint8Array>;
}
