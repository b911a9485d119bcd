import { z } from "@hono/zod-openapi";

/** A reviewer's verdict on a checked item (docs/learning.md): the Confirmed record. */
export const ReviewSchema = z
  .object({
    check_id: z.string().openapi({ description: "`job_id/item_index`" }),
    job_id: z.string(),
    item_index: z.number().int(),
    subject_reference: z.string(),
    verdict: z.enum(["genuine", "forged"]),
    reviewed_by: z.string().openapi({ description: "Audit actor of the reviewer: `key:<id>` or `user:<id>`" }),
    reviewed_at: z.string().openapi({ format: "date-time" }),
    learning: z.object({
      status: z.enum(["queued", "learned", "refused", "off", "not_applicable", "evicted", "unlearned"]).openapi({
        description:
          "queued: waiting for the learning consumer; learned; refused (see reason; set at once when the item could never be learned); off: learning was off for the organisation or the " +
          "policy when confirmed; not_applicable: a forged verdict; evicted: removed by the per-subject cap; unlearned",
      }),
      reason: z
        .string()
        .nullable()
        .openapi({
          description:
            "Why it was not learned: learning_off, blocked, input_expired, no_signature, ambiguous_signature, low_quality, low_score, " +
            "subject_changed, no_anchors, outlier; evicted; unlearned",
        }),
      detail: z.string().nullable(),
      ref_id: z.string().nullable().openapi({ description: "The learned reference (`learned-<job_id>.<index>`), once learned" }),
      learned_at: z.string().nullable(),
    }),
  })
  .openapi("Confirmed", {
    description: "A reviewer's verdict on a checked item and what learning made of it (the first verdict is kept).",
  });
