/** POST /sig/subjects/{subject_reference}/references/unlearn: removes learned references (docs/learning.md). */
import { emitLearningOutcome } from "../../services/webhook-emitters";
import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { defineRoute, problems } from "../../http/route";
import { notFound } from "../../http/problem";
import { liveEngine } from "../../services/engine-live";
import { unlearn } from "../../services/learning";
import { SubjectParams } from "./schemas";

/** At most this many source checks per request. */
export const MAX_UNLEARN_CHECKS = 100;
const CHECK_ID = /^[A-Za-z0-9._-]{1,128}\/(0|[1-9]\d{0,5})$/;

export const UnlearnRequest = z
  .strictObject({
    since: z.iso.datetime({ offset: true, message: "must be an RFC 3339 date-time" }).optional().openapi({
      description:
        "Unlearn references learned from checks made at or after this time; blocks every check of the subject made since, recorded up to now",
    }),
    checks: z
      .array(
        z
          .string()
          .regex(CHECK_ID, "must be a check id `job_id/index`")
          .refine((s) => !/^\.\.?\//.test(s), "must be a check id `job_id/index`"),
      )
      .min(1, "must name at least one check")
      .max(MAX_UNLEARN_CHECKS, `must name at most ${MAX_UNLEARN_CHECKS} checks`)
      .optional()
      .openapi({ description: "Unlearn references learned from these checks (`job_id/index`) and block them" }),
  })
  .refine((b) => (b.since === undefined) !== (b.checks === undefined), { message: "give exactly one of since or checks", path: ["since"] })
  .openapi("UnlearnRequest", {
    description:
      "Selects learned references by check time (`since`) or by source check (`checks`): exactly one. " +
      "Neither or both is a 400 naming `since`.",
    // The refine above, which the generator cannot express: each branch requires its own member, and oneOf
    // refuses a body that matches both (or neither).
    oneOf: [
      { title: "By check time", required: ["since"] },
      { title: "By source check", required: ["checks"] },
    ],
  });

export const Unlearned = z
  .object({
    subject_reference: z.string().openapi({ description: "The subject, as in the path" }),
    removed: z
      .array(
        z.object({
          ref_id: z.string().openapi({ description: "The learned reference removed (`learned-...`); its file is deleted" }),
          learned_from: z.string().nullable().openapi({ description: "The check (`job_id/index`) it was learned from" }),
          learned_at: z.string().nullable().openapi({ format: "date-time", description: "When it was learned (enrolled)" }),
        }),
      )
      .openapi({ description: "The learned references removed, possibly none" }),
    blocked_checks: z
      .array(z.string())
      .openapi({ description: "Source checks of the removed references (and the named checks), blocked from being learned again" }),
    blocked_since: z.string().nullable().openapi({
      format: "date-time",
      description:
        "With `since`: that time, as sent; every check of the subject made since then and recorded before this call is blocked too. Null with `checks`",
    }),
  })
  .openapi("Unlearned", {
    description:
      "What an unlearn removed and blocked. The subject's model is rebuilt without the removed references; 200 also when none was removed.",
  });

const unlearnRoute = defineRoute(
  { permission: "sig:references:delete" },
  {
    method: "post",
    path: "/sig/subjects/{subject_reference}/references/unlearn",
    tags: ["subjects"],
    summary: "Unlearn learned references by check time or source check",
    description:
      "Idempotency-Key required. Removes the selected learned references and their files, rebuilds the model and blocks the source " +
      "checks from being learned again. `since` blocks the subject's checks made since then and recorded up to the call; a job still " +
      "running then records its checks later and they are not blocked. Audited as `reference.unlearn`. 200 also when none was removed.",
    request: { params: SubjectParams, body: { required: true, content: { "application/json": { schema: UnlearnRequest } } } },
    responses: {
      200: { description: "What was removed and blocked", content: { "application/json": { schema: Unlearned } } },
      ...problems(400, 401, 403, 404, 409, 421, 429),
    },
  },
);

export function registerUnlearnRoute(app: App): void {
  app.openapi(unlearnRoute, async (c) => {
    const { subject_reference: subjectReference } = c.req.valid("param");
    const body = c.req.valid("json");
    const tenant = c.get("tenant");
    const selection = body.since !== undefined ? { since: body.since } : { checks: body.checks! };
    const out = await unlearn(
      {
        store: tenant.store,
        engine: liveEngine(),
        announce: (outcome) => emitLearningOutcome({ env: c.env, org: tenant.org, store: tenant.store }, outcome),
      },
      tenant.org.id,
      subjectReference,
      selection,
      c.get("caller").actor,
      c.get("requestId"),
    );
    if (!out) throw notFound("subject");
    return c.json({ subject_reference: subjectReference, ...out }, 200);
  });
}
