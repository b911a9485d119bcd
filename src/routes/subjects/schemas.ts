import { z } from "@hono/zod-openapi";
import { Identifier } from "../../http/schemas";
import { REFERENCE_SOURCES } from "../../domain/enrolment";
import { ReviewedCheckResult } from "../checks/schemas";
import { ReviewSchema } from "../checks/review-schema";

export const SubjectParams = z.object({
  subject_reference: Identifier.openapi({ param: { name: "subject_reference", in: "path" }, example: "cust-00042" }),
});

export const ReferenceParams = SubjectParams.extend({
  ref_id: Identifier.openapi({ param: { name: "ref_id", in: "path" }, example: "card-2024" }),
});

const BoxSchema = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }).openapi("Box");

export const LastCheck = z
  .object({
    check_id: z.string().openapi({ description: "`job_id/index` of the item" }),
    decision: z.string().nullable(),
    checked_at: z.string(),
  })
  .openapi("LastCheck");

export const ReferenceCounts = z
  .object({
    anchors: z.number().int().openapi({ description: "Live references enrolled by the caller" }),
    learned: z.number().int().openapi({ description: "Live references learned by the service" }),
  })
  .openapi("ReferenceCounts");

export const SubjectSummary = z
  .object({
    subject_reference: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    reference_counts: ReferenceCounts,
    last_check: LastCheck.nullable(),
  })
  .openapi("SubjectSummary");

export const SubjectList = z.object({ subjects: z.array(SubjectSummary), next_cursor: z.string().nullable() }).openapi("SubjectList");

export const ReferenceRecord = z
  .object({
    ref_id: z.string(),
    kind: z.enum(["anchor", "learned"]),
    source: z.enum(REFERENCE_SOURCES).openapi({
      description:
        "signature_card, confirmed_past or unverified (spec 2.5). A learned reference is a past signature a reviewer confirmed: " +
        "confirmed_past, with kind learned and the source check in provenance.learned_from",
    }),
    status: z.enum(["queued", "enrolled", "rejected"]).openapi({
      description: "queued: waiting for the enrolment queue; enrolled: live; rejected: not usable (see rejected_reason)",
    }),
    rejected_reason: z
      .string()
      .nullable()
      .openapi({
        description:
          "rejected: `no_signature` or `unreadable` (as in ReferenceOutcome); for a queued reference also `unsupported_format`, `corrupt_file`, " +
          "`too_large`, `too_many_pixels`, `too_many_pages`, `no_raster_content` or `processing_failed` (the queue gave up after its retries); " +
          "`upgrade_failed`: a live reference whose features could not be extracted again for a new engine version (docs/feature-upgrades.md)",
      }),
    rejected_detail: z.string().nullable().openapi({ description: "rejected: what was wrong, in words" }),
    outlier: z.boolean().openapi({ description: "Flagged by the reference model as unlike the others" }),
    provenance: z.object({
      method: z.enum(["upload", "url", "learned"]),
      source_url: z.string().nullable(),
      learned_from: z.string().nullable().openapi({ description: "Check id (job_id/index) a learned reference came from" }),
      uploaded_at: z.string(),
      enrolled_at: z.string().nullable(),
      confirmed_by: z
        .string()
        .nullable()
        .optional()
        .openapi({ description: "Learned references: audit actor of the reviewer who confirmed the source check" }),
      confirmed_at: z.string().nullable().optional().openapi({ description: "Learned references: when the source check was confirmed" }),
      learned_at: z.string().nullable().optional().openapi({ description: "Learned references: when it was learned" }),
    }),
    file: z.object({ content_type: z.string(), byte_size: z.number().int(), sha256: z.string() }),
    signature: z.object({ page: z.number().int(), box: BoxSchema, quality: z.number().nullable() }).nullable(),
    image_url: z.string(),
    replacement: z
      .object({
        status: z.enum(["queued", "rejected"]).openapi({
          description: "queued: waiting for the enrolment queue; rejected: not enrolled (see rejected_reason), the reference above stays",
        }),
        source: z.enum(REFERENCE_SOURCES),
        rejected_reason: z.string().nullable().openapi({ description: "rejected: as the reference's rejected_reason" }),
        rejected_detail: z.string().nullable(),
        uploaded_at: z.string(),
        file: z.object({ content_type: z.string(), byte_size: z.number().int(), sha256: z.string() }),
      })
      .nullable()
      .openapi({
        description:
          "A later upload of this ref_id that was queued (the 4th file of a PUT onwards) while the reference was live. The live " +
          "reference stays in use until the upload is enrolled, and then gives way to it; a rejected upload leaves it as it was " +
          "(as a rejected upload in the request does) and is shown here until the next upload or delete of the ref_id. null when none",
      }),
  })
  .openapi("ReferenceRecord");

export const ForgeabilitySchema = z
  .object({
    estimated_far_at_approve: z
      .number()
      .min(0)
      .max(1)
      .openapi({
        description:
          "Estimated share of skilled forgeries of a signature like this subject's that would score at or above approve_threshold. " +
          "Fitted on development writers and validated by decile of subjects (docs/forgeability.md): an estimate, not a measurement.",
      }),
    approve_threshold: z.number().openapi({ description: "The approve threshold the estimate was computed at" }),
    policy: z
      .string()
      .openapi({ description: "`<name>@<version>` of the policy that threshold came from: the organisation's `default` policy" }),
    level: z.enum(["low", "medium", "high"]).openapi({
      description:
        "low: under 3% estimated; medium: 3% to 8%; high: 8% or more. Desks should review medium and high subjects' approvals more",
    }),
    advice: z.string().nullable().openapi({ description: "What a desk should do and why; null when the level is low" }),
    consistency: z.number().min(0).max(1).openapi({
      description: "How alike the references are, in (0, 1): 0.5 = a typical development writer, lower = the references vary more",
    }),
    complexity: z.number().min(0).max(1).openapi({
      description: "How complex the signature is, in (0, 1): 0.5 = a typical development signature, lower = simpler (easier to imitate)",
    }),
    basis: z
      .object({
        references: z.number().int().openapi({ description: "Live references the model uses (outliers left out)" }),
        variants: z.number().int().openapi({ description: "Synthetic variants standing in for missing references (fewer than 3)" }),
      })
      .openapi({ description: "What the estimate rests on" }),
    version: z.number().int().openapi({ description: "Version of the estimate's definition" }),
    computed_at: z
      .string()
      .openapi({ description: "When it was computed: with the reference model, whenever the live references changed" }),
  })
  .openapi("Forgeability", {
    description:
      "How forgeable the subject is. Null when the subject has no live reference yet, or when its model was built before " +
      "estimates existed (any change to its references computes it). Computed at the approve threshold of the default policy " +
      "when the references last changed; a later change to that policy shows here after the next change to the references.",
  });

export const Subject = z
  .object({
    subject_reference: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    reference_counts: ReferenceCounts,
    forgeability: ForgeabilitySchema.nullable(),
    references: z.array(ReferenceRecord),
    learning: z
      .object({
        recent: z
          .array(ReviewSchema)
          .openapi({ description: "The subject's newest 25 reviews (Confirmed records), with each learning outcome and refusal reason" }),
      })
      .optional(),
    checks: z.object({
      recent: z
        .array(ReviewedCheckResult)
        .openapi({ description: "The newest 25 checked items of the subject, shaped as in the items list (with each item's review)" }),
      total: z.number().int(),
      next: z.string().nullable().openapi({ description: "URL listing all of the subject's checked items, or null when there are none" }),
    }),
  })
  .openapi("Subject");

export const ReferenceOutcomeSchema = z
  .object({
    ref_id: z.string().openapi({ description: "The reference, as the request named it" }),
    status: z.enum(["enrolled", "rejected", "queued"]).openapi({
      description:
        "enrolled: live now; rejected: not usable (a live reference of that ref_id stays as it was); " +
        "queued: left to the enrolment queue (see the subject's references for the outcome)",
    }),
    source: z.enum(REFERENCE_SOURCES).openapi({ description: "As sent, default unverified" }),
    replaced: z.boolean().optional().openapi({ description: "enrolled: an earlier reference with this ref_id was replaced" }),
    quality: z.number().nullable().optional().openapi({ description: "enrolled: quality score in [0, 1] of the signature found" }),
    page: z.number().int().optional().openapi({ description: "enrolled: the 1-based page the signature was taken from (the first)" }),
    box: BoxSchema.optional().openapi({ description: "enrolled: the signature's box on that page, in page pixels" }),
    reason: z
      .string()
      .optional()
      .openapi({
        description:
          "rejected: `no_signature` (no signature found, or the one found holds no ink) or `unreadable` (the page or the signature " +
          "is below the quality floor). A file that cannot be read at all (not PNG, JPEG, TIFF or PDF, corrupt, too large) " +
          "fails the whole request instead (415, 413 or 422), and nothing is stored.",
      }),
    detail: z.string().optional().openapi({ description: "rejected: what was wrong, in words" }),
  })
  .openapi("ReferenceOutcome", { description: "What became of one reference of the request." });

export const ReferencesResult = z
  .object({
    subject_reference: z.string().openapi({ description: "The subject, created by this request if it was new" }),
    references: z.array(ReferenceOutcomeSchema).openapi({ description: "One outcome per reference, in request order" }),
    counts: z
      .object({
        enrolled: z.number().int().openapi({ description: "References enrolled within the request" }),
        rejected: z.number().int().openapi({ description: "References rejected within the request" }),
        queued: z.number().int().openapi({ description: "References left to the enrolment queue (those past the first 3)" }),
      })
      .openapi({ description: "The outcomes counted by status" }),
    forgeability: ForgeabilitySchema.nullable().openapi({
      description:
        "The subject's forgeability from its live references after this request (queued ones count once enrolled); null as in Subject",
    }),
    subject_url: z.string().openapi({ format: "uri", description: "The subject (GET /sig/subjects/{subject_reference})" }),
  })
  .openapi("ReferencesResult", {
    description:
      "The outcome of enrolling references: 200 when each was handled within the request, 202 when some were queued. " +
      "Rejected references are not an error of the request.",
  });

export const ReferencesByUrl = z
  .object({
    references: z
      .array(
        z
          .object({
            ref_id: z.string().openapi({
              description:
                "Identifier of the reference: 1 to 128 of [A-Za-z0-9._-], not starting with '.' or 'learned-'. An upload replaces the reference of that ref_id",
            }),
            url: z.string().url().openapi({ description: "https URL on the organisation's allowlisted hosts or buckets" }),
            source: z.enum(REFERENCE_SOURCES).default("unverified").openapi({ description: "Where the signature comes from (spec 2.5)" }),
          })
          .strict(),
      )
      .min(1)
      .max(20)
      .openapi({
        description:
          "1 to 20 references, each ref_id once. The URLs are fetched under one shared 60 s deadline, at most 20 MB in total, before anything is enrolled",
      }),
  })
  .strict()
  .openapi("ReferencesByUrl", {
    description: "Enrol references by URL (the JSON body of PUT .../references): the multipart form's files, fetched by the service.",
  });
