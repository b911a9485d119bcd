import { z } from "@hono/zod-openapi";
import type { App } from "../app";
import { EVENT_KINDS, type EventKind } from "../domain/webhook-events";
import { WEBHOOK_HEADERS } from "../domain/webhook-signature";
import { CheckResultSchema } from "./checks/schemas";

/**
 * The webhook catalogue in the OpenAPI document: each event's `data` schema as a component, and each
 * event kind under the document's `webhooks` (OpenAPI 3.1), with the signing headers. The delivery
 * code reads the same catalogue (src/domain/webhook-events.ts).
 */
const COMPONENTS: Record<string, z.ZodType> = { CheckResult: CheckResultSchema };

function dataSchema(kind: EventKind): z.ZodType {
  if ("component" in kind.data) return COMPONENTS[kind.data.component];
  return (kind.data as z.ZodType & { openapi: (name: string) => z.ZodType }).openapi(kind.dataName ?? kind.type);
}

export function registerWebhookDocs(app: App): void {
  for (const kind of EVENT_KINDS) {
    const envelope = z
      .object({
        id: z.string().openapi({ description: "The message id, also in Service-Webhook-Id: the same on every attempt; deduplicate on it" }),
        type: z.literal(kind.type),
        timestamp: z.string().openapi({ format: "date-time", description: "When the event happened" }),
        version: z.string().openapi({ description: "The Service-Version the body is rendered in (the organisation's pin)" }),
        org_id: z.string(),
        data: dataSchema(kind),
      })
      .openapi(`WebhookEvent_${kind.type.replace(/\./g, "_")}`);
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: kind.type,
      summary: kind.description,
      description: `Products: ${kind.products.join(", ")}${kind.subscribable ? "" : " (sent on request only)"}. Verify the signature and reject a timestamp more than 5 minutes away from your clock before trusting the body; see docs/webhooks.md.`,
      tags: ["webhooks"],
      request: {
        headers: z.object({
          [WEBHOOK_HEADERS.id]: z.string().openapi({ description: "Message id (Standard Webhooks `webhook-id`)" }),
          [WEBHOOK_HEADERS.timestamp]: z.string().openapi({ description: "Unix seconds of this attempt (`webhook-timestamp`)" }),
          [WEBHOOK_HEADERS.signature]: z.string().openapi({
            description:
              "Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per secret in force (two for 24 h after a rotation)",
          }),
          "Service-Version": z.string(),
        }),
        body: { required: true, content: { "application/json": { schema: envelope } } },
      },
      responses: {
        200: { description: "Any 2xx within 15 s acknowledges the message; anything else (or no answer) is retried on the schedule" },
      },
    });
  }
}
