/**
 * A reviewer's verdict on a checked item: POST .../confirm (genuine, may be learned) and POST .../reject
 * (forged, never learned). The first verdict on an item is kept; docs/learning.md.
 */
import type { App } from "../../app";
import { defineRoute, problems } from "../../http/route";
import { confirmItem, rejectItem, renderReview, type LearnMessage } from "../../services/learning";
import { emitLearningOutcome } from "../../services/webhook-emitters";
import { ItemParams } from "./schemas";
import { ReviewSchema } from "./review-schema";

export { ReviewSchema };

const confirm = defineRoute(
  { permission: "sig:references:write", billing: true },
  {
    method: "post",
    path: "/sig/checks/{job_id}/items/{index}/confirm",
    tags: ["checks"],
    summary: "Confirm a checked item as genuine (it may then be learned as a reference)",
    description:
      "No body; Idempotency-Key required. The first confirmation is kept: a later one answers 200 with the first record. Audited as " +
      "`check.confirm`. Queued for learning unless learning is off for the organisation or the item's policy (`learning.status` " +
      "`off`, reason `learning_off`); the learning consumer then applies the entry bar (docs/learning.md) and records the outcome in " +
      "`learning`. An item that could never be learned is still confirmed, and answers at once with `learning.status` `refused` " +
      "and its reason: `input_expired` (its input has left the job's inbox), `no_signature` (no located signature) or " +
      "`subject_changed` (its subject was deleted, or deleted and enrolled again, since the check). 409 only when no confirmation " +
      "can be recorded (see the 409 response).",
    request: { params: ItemParams },
    responses: {
      200: { description: "The confirmation (the first one when repeated)", content: { "application/json": { schema: ReviewSchema } } },
      ...problems(400, 401, 402, 403, 404, 421, 429, 503),
      409: {
        ...problems(409)[409],
        description:
          "`conflict`: no confirmation can be recorded. The item has no decision (its job is still checking it, or it ended in an " +
          "item error), it was checked against references sent with it rather than a subject, or it was already marked forged. An " +
          "expired input, a missing signature or a deleted subject is not a conflict: the confirmation is recorded and not learned.",
      },
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
      {
        store: tenant.store,
        queue: c.env.LEARN_QUEUE as Queue<LearnMessage>,
        announce: (outcome) => emitLearningOutcome({ env: c.env, org: tenant.org, store: tenant.store }, outcome),
      },
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
