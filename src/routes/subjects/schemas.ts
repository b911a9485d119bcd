import { z } from "@hono/zod-openapi";
import { Identifier } from "../../http/schemas";
import { REFERENCE_SOURCES } from "../../domain/enrolment";
import { CheckResultSchema } from "../checks/schemas";
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
    source: z.enum([...REFERENCE_SOURCES, "learned"]),
    status: z.enum(["queued", "enrolled", "rejected"]).openapi({
      description: "queued: waiting for the enrolment queue; enrolled: live; rejected: not usable (see rejected_reason)",
    }),
    rejected_reason: z.string().nullable(),
    rejected_detail: z.string().nullable(),
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
  })
  .openapi("ReferenceRecord");

export const Subject = z
  .object({
    subject_reference: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    reference_counts: ReferenceCounts,
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
        .array(CheckResultSchema)
        .openapi({ description: "The newest 25 checked items of the subject, shaped as in the items list" }),
      total: z.number().int(),
      next: z.string().nullable().openapi({ description: "URL listing all of the subject's checked items, or null when there are none" }),
    }),
  })
  .openapi("Subject");

export const ReferenceOutcomeSchema = z
  .object({
    ref_id: z.string(),
    status: z.enum(["enrolled", "rejected", "queued"]),
    source: z.enum(REFERENCE_SOURCES),
    replaced: z.boolean().optional().openapi({ description: "enrolled: an earlier reference with this ref_id was replaced" }),
    quality: z.number().nullable().optional(),
    page: z.number().int().optional(),
    box: BoxSchema.optional(),
    reason: z.string().optional().openapi({ description: "rejected: no_signature, unreadable, ..." }),
    detail: z.string().optional(),
  })
  .openapi("ReferenceOutcome");

export const ReferencesResult = z
  .object({
    subject_reference: z.string(),
    references: z.array(ReferenceOutcomeSchema),
    counts: z.object({ enrolled: z.number().int(), rejected: z.number().int(), queued: z.number().int() }),
    subject_url: z.string(),
  })
  .openapi("ReferencesResult");

export const ReferencesByUrl = z
  .object({
    references: z
      .array(
        z
          .object({
            ref_id: z.string().openapi({ description: "Identifier of the reference (not starting with '.' or 'learned-')" }),
            url: z.string().url().openapi({ description: "https URL on the organisation's allowlisted hosts or buckets" }),
            source: z.enum(REFERENCE_SOURCES).default("unverified"),
          })
          .strict(),
      )
      .min(1)
      .max(20),
  })
  .strict()
  .openapi("ReferencesByUrl");
