import { z } from "@hono/zod-openapi";
import { Identifier, queryInteger } from "../../http/schemas";
import { CheckRequestSchema } from "../../domain/check-request";
import { DECISIONS } from "../../domain/policy-defaults";
import { JOB_STATUSES } from "../../domain/job";
import { ReviewSchema } from "./review-schema";

export const CheckRequestDoc = CheckRequestSchema.openapi("CheckRequest", {
  description:
    "The input of a check. Designed here beyond spec 2.4: at most 100 items; each item names its document as a file part name " +
    "(multipart) or {url} (a JSON body carries only URLs; a multipart body may mix both); `references` (1 to 20) override the subject's references for that item; " +
    "`target.page` is 1-based and `target.box` in page pixels; `metadata` at most 16 KB of JSON. Every item needs a " +
    "`subject_reference` or `references`.",
});

const Box = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });

/** Shared by the result and the stream's `located` event (services/engine.ts ScoredSignature). */
const CUT_OFF_TEXT =
  "True when the signature's box comes within 1% of the page's side of an edge: part of it may lie outside the image and is then " +
  "missing from what was compared, so a genuine signature can score low. The decision is not changed by it; capture the page again " +
  "with a margin, or review. Always false for input_type `signature_image`: such an image is taken as the signature whole, and is often " +
  "cut tight to its ink.";
export const CutOff = z.boolean().openapi({ description: CUT_OFF_TEXT });

export const CheckResultSchema = z
  .object({
    check_id: z.string().openapi({ description: "`job_id/item_index`" }),
    job_id: z.string(),
    item_index: z.number().int(),
    decision: z
      .enum(DECISIONS as unknown as [string, ...string[]])
      .nullable()
      .openapi({ description: "null when the item carries errors instead (counted as ERROR)" }),
    score: z.number().nullable().openapi({ description: "Calibrated score in [0, 1] of the best-matching signature" }),
    billable: z.boolean().openapi({ description: "AUTO_APPROVE, APPROVE, FLAG and FAILED are billable; the rest are free" }),
    subject_reference: z.string().nullable(),
    reference: z.string().nullable().openapi({ description: "The caller's check reference" }),
    process: z.string().nullable(),
    input_type: z.string().nullable(),
    file_name: z.string().nullable(),
    pages: z.number().int().nullable(),
    signatures: z.array(
      z.object({
        index: z.number().int().min(0),
        page: z.number().int().min(1).openapi({ description: "1-based page" }),
        box: Box.openapi({ description: "In page pixels" }),
        confidence: z
          .number()
          .min(0)
          .max(1)
          .openapi({ description: "How sure the locator is that the box holds a signature, to 4 decimals" }),
        score: z.number().nullable().openapi({ description: "This signature's score; null when it was not compared" }),
        cut_off: z
          .boolean()
          .optional()
          .openapi({ description: `${CUT_OFF_TEXT} Absent on results stored before it was reported.` }),
        box_name: z.string().nullable().optional().openapi({
          description:
            "With template_id: the name of the template box the signature was found in; null when the page did not register and the signature was found by the free search",
        }),
        image_url: z.string(),
      }),
    ),
    best_match: z
      .object({ signature_index: z.number().int(), ref_id: z.string(), score: z.number() })
      .nullable()
      .openapi({ description: "The signature that matched best and the reference it matched best" }),
    regions: z.array(z.object({ box: Box, deviation: z.number() })).openapi({
      description: "Zones of the best signature that deviate most from that reference, in page pixels; deviation 1 = typical",
    }),
    quality: z.object({ score: z.number(), cue: z.string(), figures: z.record(z.string(), z.unknown()) }).nullable(),
    reference_count: z.number().int().nullable(),
    versions: z.object({ policy: z.string().openapi({ description: "`<policy name>@<version>`" }) }),
    image_url: z.string().nullable().openapi({ description: "Crop of the default signature (best match, else the first)" }),
    metadata: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .openapi({
        description:
          "The item's own metadata, else the CheckRequest's (an item's replaces the request's whole; they are not merged). " +
          "Present on reading the item (the 200 of a synchronous check, the job's results, ndjson, the stream's decision, webhooks); lists omit it.",
      }),
    errors: z
      .array(z.object({ code: z.string(), detail: z.string() }))
      .openapi({ description: "Why an item has no decision (free of charge)" }),
    template: z
      .object({
        template_id: z.string(),
        registered: z.boolean().openapi({ description: "True when every page searched with the template registered to the blank form" }),
        pages: z.array(z.object({ page: z.number().int().min(1), registered: z.boolean() })).openapi({
          description: "Each page searched with the template (the blank's pages that hold boxes) and whether it registered",
        }),
        detail: z
          .string()
          .nullable()
          .openapi({ description: "Why the template was not (fully) used: such pages were searched without it" }),
      })
      .nullable()
      .optional()
      .openapi({
        description:
          "Present when the item named a template_id. A page that does not register to the blank (another form, too skewed, cut off) is " +
          "not an error: it is searched without the template, and its signatures carry box_name null.",
      }),
    created_at: z.string(),
    completed_at: z.string(),
  })
  .openapi("CheckResult");

/** A CheckResult with its reviewer's verdict: the job's results and the items list carry it. */
export const ReviewedCheckResult = CheckResultSchema.extend({
  // A union, not ReviewSchema.nullable().openapi(...): that form rewrites the Confirmed component itself
  // as nullable, and the confirm and reject routes would then seem to answer null.
  review: z
    .union([ReviewSchema, z.null()])
    .openapi({ description: "The reviewer's verdict and what learning made of it; null without one" }),
});

export const CheckAccepted = z
  .object({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    item_count: z.number().int(),
    status_url: z.string(),
  })
  .openapi("CheckAccepted");

export const JobSchema = z
  .object({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    source: z.enum(["api", "bucket"]),
    mode: z.enum(["sync", "queued", "stream"]).openapi({ description: "How the creating request handled it" }),
    policy: z.string().openapi({ description: "`<name>@<version>` applied to every item" }),
    item_count: z.number().int(),
    completed_items: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    completed_at: z.string().nullable(),
    inbox_expires_at: z.string().openapi({ description: "Inputs and crops are deleted after this (inbox_ttl)" }),
    status_url: z.string(),
    results: z.array(ReviewedCheckResult).openapi({ description: "Finished items by item_index" }),
    next_cursor: z.string().nullable().openapi({ description: "The last item_index returned; null on the last page" }),
  })
  .openapi("Job");

export const JobParams = z.object({
  job_id: Identifier.openapi({ param: { name: "job_id", in: "path" }, example: "chk_01JABCDEF" }),
});

export const ItemParams = JobParams.extend({
  index: z
    .string()
    .regex(/^(0|[1-9]\d{0,5})$/)
    .openapi({ param: { name: "index", in: "path" }, example: "0" }),
});

export const JobQuery = z.object({
  cursor: z.string().optional().openapi({ description: "The previous page's next_cursor (the last item_index returned)" }),
  limit: queryInteger({ min: 1, max: 500 }).default(100).openapi({ description: "1 to 500, default 100" }),
  format: z.enum(["json", "ndjson"]).default("json"),
  decision: z
    .enum([...DECISIONS, "ERROR"] as unknown as [string, ...string[]])
    .optional()
    .openapi({ description: "ERROR selects items without a decision" }),
});

export const ImageQuery = z.object({
  signature: queryInteger({ min: 0 }).optional().openapi({ description: "The signature's index; default the best match, else the first" }),
});
