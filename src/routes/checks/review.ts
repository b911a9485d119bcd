/**
 * A reviewer's verdict on a checked item: POST .../confirm (genuine, may be learned) and POST .../reject
 * (forged, never learned). The first verdict on an item is kept; docs/learning.md.
 */
import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { defineRoute, problems } from "../../http/route";
import { confirmItem, rejectItem, renderReview, type LearnMessage } from "../../services/learning";
import { ItemParams } from "./schemas";

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
          "queued: waiting for the learning consumer; learned; refused (see reason); off: learning was off for the organisation or the " +
          "policy when confirmed; not_applicable: a forged verdict; evicted: removed by the per-subject cap; unlearned",
      }),
      reason: z.string().nullable().openapi({
        description:
          "Why it was not learned: learning_off, blocked, input_expired, no_signature, ambiguous_signature, low_quality, low_score, " +
          "subject_changed, no_anchors, outlier; evicted; unlearned",
      }),
      detail: z.string().nullable(),
      ref_id: z.string().nullable().openapi({ description: "The learned reference (`learned-<job_id>.<index>`), once learned" }),
      learned_at: z.string().nullable(),
    }),
  })
  .openapi("Confirmed", { description: "A reviewer's verdict on a checked item and what learning made of it (the first verdict is kept)." });

const confirm = defineRoute(
  { permission: "sig:references:write", billing: true },
  {
    method: "post",
    path: "/sig/checks/{job_id}/items/{index}/confirm",
    tags: ["checks"],
    summary: "Confirm a checked item as genuine (it may then be learned as a reference)",
    description:
      "No body; Idempotency-Key required. The first confirmation is kept: a later one answers 200 with the first record. Audited as " +
      "`check.confirm`. Queued for learning unless learning is off for the organisation or the item's policy; the learning consumer " +
      "then applies the entry bar (docs/learning.md) and records the outcome in `learning`. 409 when the item has no decision, no " +
      "located signature, its input has expired, its subject was deleted, or it was already marked forged.",
    request: { params: ItemParams },
    responses: {
      200: { description: "The confirmation (the first one when repeated)", content: { "application/json": { schema: ReviewSchema } } },
      ...problems(400, 401, 402, 403, 404, 409, 421, 429, 503),
    },
  },
);

const reject = defineRoute(
  { permission: "sig:references:write" },
  {
    method: "post",
    path: "/sig/checks/{job_id}/items/{index}/reject",
    tags: ["checks"],
    summary: "Mark a checked item as forged (never learned)",
    description:
      "No body; Idempotency-Key required. The reviewer's verdict that the item is a forgery. The first verdict is kept (a later reject " +
      "answers 200 with it); audited as `check.reject`. Never learned, and free of charge. 409 when the item has no decision or was " +
      "already confirmed genuine (unlearn it first if it was learned).",
    request: { params: ItemParams },
    responses: {
      200: { description: "The verdict (the first one when repeated)", content: { "application/json": { schema: ReviewSchema } } },
      ...problems(400, 401, 403, 404, 409, 421, 429),
    },
  },
);

export function registerReviewRoutes(app: App): void {
  app.openapi(confirm, async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    const tenant = c.get("tenant");
    const { review } = await confirmItem(
      { store: tenant.store, queue: c.env.LEARN_QUEUE as Queue<LearnMessage> },
      tenant.org,
      jobId,
      Number(index),
      c.get("caller").actor,
      c.get("requestId"),
    );
    return c.json(renderReview(review), 200);
  });

  app.openapi(reject, async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    const tenant = c.get("tenant");
    const { review } = await rejectItem(tenant.store, tenant.org, jobId, Number(index), c.get("caller").actor, c.get("requestId"));
    return c.json(renderReview(review), 200);
  });
}
