/**
 * The check methods of the engine, bound to src/verify/pipeline and the isolate's WASM core, joined to
 * the enrolment methods of liveEngine(): the one object checks use.
 */
import { getCore } from "../verify/core-module";
import { openDocument } from "../verify/decode";
import { checkDocument, InsufficientReferencesError, learnedCropPng } from "../verify/pipeline";
import { ModelMismatchError } from "../verify/compare";
import type { ReferenceModel } from "../verify/model";
import type { TemplateModel } from "../verify/template";
import { signatureCropPng } from "../verify/render";
import { VerifyError, type Raster } from "../verify/types";
import type { CheckEngine, VerificationEngine } from "./engine";
import { liveEngine } from "./engine-live";

/** Page `page` (from 1) of a stored input, decoded whole. */
async function pageOf(bytes: Uint8Array, page: number): Promise<Raster> {
  const doc = await openDocument(bytes);
  if (page < 1 || page > doc.pageCount) throw new VerifyError("page_out_of_range", `page ${page} is outside the document`);
  return doc.decodePage(page - 1);
}

/** The references cannot be compared with: too few usable ones, or a model built by another engine version. */
export class NotEnoughReferences extends Error {
  constructor(
    message: string,
    readonly code: "not_enough_references" | "references_outdated" = "not_enough_references",
  ) {
    super(message);
    this.name = "NotEnoughReferences";
  }
}

let engine: (VerificationEngine & CheckEngine) | undefined;

export function liveCheckEngine(): VerificationEngine & CheckEngine {
  engine ??= {
    ...liveEngine(),

    async checkDocument(bytes, model, policy, opts, onEvent) {
      let outcome;
      try {
        outcome = await checkDocument(
          getCore(),
          bytes,
          model as ReferenceModel,
          { thresholds: policy.thresholds, quality_floor: policy.quality_floor },
          {
            inputType: opts.inputType ?? undefined,
            target: opts.target ?? undefined,
            templatePages: (opts.templatePages ?? undefined) as Record<number, TemplateModel> | undefined,
            renderCrops: opts.renderCrops ?? true,
          },
          async (e) => {
            if (e.type === "quality") {
              const { page, score, cue, figures } = e.data;
              await onEvent?.({ type: "quality", page, quality: { score, cue, figures: figures as unknown as Record<string, unknown> } });
            } else if (e.type === "located") {
              await onEvent?.({
                type: "located",
                signatures: e.data.signatures.map((s) => ({
                  index: s.index,
                  page: s.page,
                  box: s.box,
                  confidence: s.confidence,
                  cut_off: s.cutOff,
                })),
              });
            } else {
              await onEvent?.({ type: "comparing", referenceCount: e.data.reference_count });
            }
          },
        );
      } catch (err) {
        if (err instanceof InsufficientReferencesError) throw new NotEnoughReferences(err.message);
        // Checks upgrade outdated references before comparing (services/feature-upgrade.ts), so this is
        // left for a model replaced by a concurrent change meanwhile (a retry reads the new one), or one
        // without any usable reference.
        if (err instanceof ModelMismatchError)
          throw new NotEnoughReferences(
            `The subject's references cannot be compared with (${err.message}); retry the check, and enrol them again if it persists.`,
            "references_outdated",
          );
        throw err;
      }
      const best = outcome.bestSignature === null ? undefined : outcome.signatures.find((s) => s.index === outcome.bestSignature);
      return {
        decision: outcome.decision,
        score: outcome.score,
        pages: outcome.pages,
        quality: {
          score: outcome.quality.score,
          cue: outcome.quality.cue,
          figures: outcome.quality.figures as unknown as Record<string, unknown>,
        },
        signatures: outcome.signatures.map((s) => ({
          index: s.index,
          page: s.page,
          box: s.box,
          confidence: s.confidence,
          score: s.score,
          cut_off: s.cutOff,
          ...(s.zone !== undefined ? { zone: s.zone } : {}),
        })),
        best:
          best && outcome.bestReferenceId && outcome.score !== null
            ? { signatureIndex: best.index, refId: outcome.bestReferenceId, score: outcome.score }
            : null,
        regions: outcome.regions,
        cropPngs: outcome.cropPngs,
        registration: outcome.registration,
      };
    },

    async signatureCrop(bytes, page, box) {
      return signatureCropPng(await pageOf(bytes, page), box);
    },

    async learnedCrop(bytes, page, box, inputType) {
      return learnedCropPng(await pageOf(bytes, page), box, inputType);
    },
  };
  return engine;
}
