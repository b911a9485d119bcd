/**
 * The VerificationEngine bound to the real pipeline (src/verify) and the isolate's WASM core.
 */
import { DEFAULT_QUALITY_FLOOR } from "../domain/policy-defaults";
import type { RejectionReason } from "../domain/enrolment";
import { getCore } from "../verify/core-module";
import { openDocument } from "../verify/decode";
import { buildReferenceModel, type ReferenceModel } from "../verify/model";
import { estimateForgeability, type Forgeability } from "../verify/forgeability";
import { logError } from "../util/log";
import { enrolReference } from "../verify/pipeline";
import { fitWithin, encodeGreyPng } from "../verify/render";
import { FEATURE_VERSION, type SignatureFeatures } from "../verify/features";
import { VerifyError } from "../verify/types";
import type { VerificationEngine } from "./engine";

/** Rejections that are about the file itself rather than what is drawn on it. */
const FILE_PROBLEMS = new Set([
  "unsupported_format",
  "corrupt_file",
  "too_large",
  "too_many_pixels",
  "too_many_pages",
  "no_raster_content",
]);

/** What enrolment stores per reference (subject_references.features, JSON). */
interface StoredReferenceFeatures {
  signature: SignatureFeatures;
  variantRow: number[] | null;
}

let engine: VerificationEngine | undefined;

export function liveEngine(): VerificationEngine {
  engine ??= {
    async inspect(bytes) {
      const doc = await openDocument(bytes);
      // Decoding the first page also catches truncated or corrupt pixel data, before anything is stored.
      const page = await doc.decodePage(0);
      return { format: doc.format, pages: doc.pageCount, pixels: page.width * page.height };
    },

    async enrolReference(bytes) {
      const result = await enrolReference(getCore(), bytes, { qualityFloor: DEFAULT_QUALITY_FLOOR });
      if ("rejected" in result) {
        if (FILE_PROBLEMS.has(result.rejected)) throw new VerifyError(result.rejected as never, result.detail);
        return { ok: false, reason: result.rejected as RejectionReason, detail: result.detail };
      }
      const stored: StoredReferenceFeatures = { signature: result.features, variantRow: result.variantRow };
      return {
        ok: true,
        features: stored,
        quality: { ...result.quality, score: result.quality.score },
        page: result.page,
        box: result.box,
      };
    },

    async buildModel(refs, opts) {
      const core = getCore();
      const model = buildReferenceModel(
        core,
        refs.map((r) => {
          // Rows enrolled before variant rows were stored hold the bare features.
          const stored = r.features as StoredReferenceFeatures | SignatureFeatures;
          return "signature" in stored
            ? { refId: r.refId, features: stored.signature, variantRow: stored.variantRow, learned: r.learned }
            : { refId: r.refId, features: stored, learned: r.learned };
        }),
      );
      return {
        model,
        outliers: model.refs.filter((r) => r.outlier).map((r) => r.refId),
        forgeability: opts ? safeForgeability(() => estimateForgeability(model, core.groupOffsets, opts.approveThreshold)) : null,
      };
    },

    async thumbnail(bytes, maxSide) {
      const doc = await openDocument(bytes);
      return encodeGreyPng(fitWithin(await doc.decodePage(0), maxSide));
    },

    featureVersion: FEATURE_VERSION,

    featuresCurrent(features) {
      return signatureOf(features)?.version === FEATURE_VERSION;
    },

    modelCurrent(model) {
      const m = model as Partial<ReferenceModel> | null;
      // buildReferenceModel stamps the current version even when some references are of another one
      // (it leaves those out as unusable): every reference must be current too.
      return (
        m?.featureVersion === FEATURE_VERSION && Array.isArray(m.refs) && m.refs.every((r) => r?.features?.version === FEATURE_VERSION)
      );
    },
  };
  return engine;
}

/** The signature features inside stored features of either shape (with or without the variant row), or null. */
function signatureOf(features: unknown): SignatureFeatures | null {
  if (typeof features !== "object" || features === null) return null;
  const stored = features as Partial<StoredReferenceFeatures> & Partial<SignatureFeatures>;
  return stored.signature ?? (typeof stored.version === "number" ? (stored as SignatureFeatures) : null);
}

/**
 * The forgeability estimate is advice beside the model: when it fails, or gives something that is not a
 * finite number, the model is still stored and the subject shows `forgeability: null`.
 */
function safeForgeability(estimate: () => Forgeability): Forgeability | null {
  try {
    const f = estimate();
    return [f.estimatedFarAtApprove, f.consistency, f.complexity].every(Number.isFinite) ? f : null;
  } catch (err) {
    logError("forgeability estimate failed", err);
    return null;
  }
}
