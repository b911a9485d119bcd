import { z } from "@hono/zod-openapi";
import type { App } from "../app";
import { ARCHIVE_EVENT_TYPES, eventKind } from "../domain/webhook-events";
import { newId } from "../domain/ids";
import { invalidField, notFound } from "../http/problem";
import { problems } from "../http/route";
import { Identifier } from "../http/schemas";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { recordAudit } from "../storage/audit";
import { publishEvent } from "../services/webhooks";
import { OPERATOR_ACTOR, platformRoute } from "./platform/operator";
import { OrgIdParam } from "./platform/schemas";
import { registerEndpointRoutes } from "./webhook-routes";

/**
 * The archive product's webhook endpoints (spec 4.7). Designed here: listing and reading the log need
 * `org:read`; creating, deleting and test sends need `archive:webhooks:manage`, so a key can manage the
 * archive's endpoints without touching verification settings. POST /archive/webhooks follows the
 * Idempotency-Key rule of spec 4.1 (it is not among the exemptions).
 *
 * The archive's records live in the archive product, which publishes its seven event kinds for an
 * organisation through the operator route below; they fan out to that organisation's archive endpoints.
 */
export function registerArchiveWebhookRoutes(app: App): void {
  registerEndpointRoutes(app, {
    product: "archive",
    base: "/archive/webhooks",
    tag: "webhooks",
    label: "archive",
    read: "org:read",
    manage: "archive:webhooks:manage",
    createIdempotency: "required",
    routes: ["list", "create", "read", "delete", "deliveries", "delivery", "attempts", "test", "redeliver"],
  });

  const PublishSchema = z
    .object({
      id: Identifier.optional().openapi({
        description: "The archive product's id for this event: publishing the same id again delivers nothing more (default: a new id)",
      }),
      type: z.enum(ARCHIVE_EVENT_TYPES),
      data: z.record(z.string(), z.unknown()).openapi({ description: "The event's members; see the archive event schemas" }),
      occurred_at: z.iso.datetime({ offset: true }).optional(),
    })
    .strict()
    .openapi("ArchiveEventPublish");

  const PublishedSchema = z
    .object({
      event_id: z.string(),
      deliveries: z.number().int().openapi({ description: "Endpoints the event was newly queued for" }),
      duplicate: z.boolean().openapi({ description: "True when this id was published before (nothing more is sent)" }),
    })
    .openapi("ArchiveEventPublished");

  const publish = platformRoute({
    method: "post",
    path: "/platform/orgs/{org_id}/archive-events",
    summary:
      "Publish an archive event for an organisation; it fans out to the organisation's archive endpoints that chose it (operator, archive product)",
    request: {
      params: z.object({ org_id: OrgIdParam }),
      body: { required: true, content: { "application/json": { schema: PublishSchema } } },
    },
    responses: {
      202: { description: "Queued for delivery", content: { "application/json": { schema: PublishedSchema } } },
      ...problems(400, 401, 404, 413, 415),
    },
  });

  app.openapi(publish, async (c) => {
    const org = await directory(c.env.DIRECTORY).getOrg(c.req.valid("param").org_id);
    if (!org) throw notFound("organisation");
    const body = c.req.valid("json");
    // The catalogue's schema of the kind's data is the contract receivers are given.
    const schema = eventKind(body.type)?.data;
    if (schema && !("component" in schema)) {
      const checked = schema.safeParse(body.data);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        throw invalidField(["body.data", ...issue.path.map(String)].join("."), issue.message);
      }
    }
    const store = regionStore(c.env, org.region);
    const eventId = body.id ? `evt_arc_${body.id}` : newId("evt");
    const result = await publishEvent({ env: c.env, org, store }, "archive", {
      id: eventId,
      type: body.type,
      data: body.data,
      at: body.occurred_at,
    });
    if (!result.duplicate && result.deliveries.length > 0) {
      await recordAudit(store.db, {
        orgId: org.id,
        actor: OPERATOR_ACTOR,
        action: "archive.event",
        target: eventId,
        detail: { type: body.type },
        requestId: c.get("requestId"),
      });
    }
    return c.json({ event_id: eventId, deliveries: result.deliveries.length, duplicate: result.duplicate }, 202);
  });
}
