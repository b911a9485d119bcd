/** The payloads of the webhook endpoint routes (both products) and how rows render into them. */
import { z } from "@hono/zod-openapi";
import { Identifier, queryInteger } from "../http/schemas";
import type { AttemptRow, DeliveryRow, EndpointRow } from "../storage/webhooks";
import { subscribableTypes, type WebhookProduct } from "../domain/webhook-events";

const IsoTime = z.string().openapi({ format: "date-time" });

export const WebhookEndpointSchema = z
  .object({
    webhook_id: z.string().openapi({ example: "whk_01JD0S5Q2M3W8V6R7T9X1Y2Z3A" }),
    product: z.enum(["sig", "archive"]),
    url: z.string().openapi({ example: "https://hooks.example.com/countersign" }),
    description: z.string().nullable(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(["manual", "failing"])
      .nullable()
      .openapi({ description: "`failing`: disabled after failing every delivery for 5 days" }),
    secret_version: z.number().int().openapi({ description: "1, plus one per rotation" }),
    previous_secret_expires_at: IsoTime.nullable().openapi({ description: "Until then the secret before the last rotation also signs" }),
    failing_since: IsoTime.nullable().openapi({ description: "First failed attempt since the last successful one" }),
    created_at: IsoTime,
    updated_at: IsoTime,
  })
  .openapi("WebhookEndpoint");

export const WithSecret = WebhookEndpointSchema.extend({
  secret: z.string().openapi({
    description: "The signing secret (`whsec_` + base64). Shown only in this response.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("WebhookEndpointWithSecret");

export const RotatedSchema = z
  .object({
    webhook_id: z.string(),
    secret: z.string().openapi({ description: "The new signing secret. Shown only in this response." }),
    secret_version: z.number().int(),
    previous_secret_expires_at: IsoTime.openapi({ description: "The previous secret keeps signing beside the new one until then (24 h)" }),
  })
  .openapi("WebhookSecretRotated");

export const EndpointListSchema = z
  .object({ endpoints: z.array(WebhookEndpointSchema), next_cursor: z.string().nullable() })
  .openapi("WebhookEndpointList");

export const WebhookDeliverySchema = z
  .object({
    delivery_id: z.string(),
    webhook_id: z.string(),
    event_id: z.string().openapi({ description: "The message id (`Service-Webhook-Id`): the same for every attempt" }),
    event_type: z.string(),
    status: z.enum(["pending", "sending", "succeeded", "failed"]),
    trigger: z.enum(["event", "manual", "test"]).openapi({ description: "`manual`: last (re)started by a redelivery" }),
    attempts: z.number().int(),
    next_attempt_at: IsoTime.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: IsoTime,
    completed_at: IsoTime.nullable(),
  })
  .openapi("WebhookDelivery");

export const WebhookAttemptSchema = z
  .object({
    attempt_id: z.string(),
    delivery_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.number().int().openapi({ description: "1 for the first attempt of the delivery" }),
    trigger: z.enum(["event", "manual", "test"]),
    started_at: IsoTime,
    duration_ms: z.number().int(),
    status_code: z.number().int().nullable().openapi({ description: "The endpoint's HTTP status; null when there was no answer" }),
    error: z.string().nullable().openapi({
      description: "`timeout: ...`, `network_error: ...`, `address_not_allowed: ...`, `dns_failed: ...` or `http_status: ...`",
    }),
    response_body: z.string().nullable().openapi({ description: "The first KB of the answer" }),
    succeeded: z.boolean(),
  })
  .openapi("WebhookAttempt");

export const DeliveryListSchema = z
  .object({ deliveries: z.array(WebhookDeliverySchema), next_cursor: z.string().nullable() })
  .openapi("WebhookDeliveryList");
export const AttemptListSchema = z
  .object({ attempts: z.array(WebhookAttemptSchema), next_cursor: z.string().nullable() })
  .openapi("WebhookAttemptList");
export const DeliveryDetailSchema = WebhookDeliverySchema.extend({
  version: z.string().openapi({ description: "The Service-Version the message is rendered in" }),
  payload: z.record(z.string(), z.unknown()).nullable().openapi({ description: "The message body (null once the event has expired)" }),
  attempt_log: z.array(WebhookAttemptSchema),
}).openapi("WebhookDeliveryDetail");

const Url = z.string().min(1).max(2048).openapi({ description: "https on a public host; re-checked at every delivery" });
const Description = z.string().max(500);

/**
 * The events an endpoint of `product` may choose. Validated by assertEvents (services/webhooks.ts), whose 400
 * names the offending entry and lists the choices; the enum is stated in the document only, so that 400 stays
 * the one answer to an event the product does not offer.
 */
function events(product: WebhookProduct) {
  const allowed = subscribableTypes(product);
  return z
    .array(z.string().min(1).max(64).openapi({ enum: allowed }))
    .min(1)
    .max(32)
    .openapi({
      description:
        `The events to receive, among the ${product === "archive" ? "archive" : "verification"} product's: ${allowed.join(", ")}. ` +
        "Any other (an unknown event, or one of the other product's) is a 400 naming it; duplicates are dropped.",
    });
}

/** Each product's create and update bodies: the same members, but each product offers its own events. */
function endpointBodies(product: WebhookProduct) {
  const prefix = product === "archive" ? "Archive" : "";
  return {
    create: z
      .object({
        url: Url,
        events: events(product),
        description: Description.optional(),
        enabled: z.boolean().optional().openapi({ description: "Default true" }),
      })
      .strict()
      .openapi(`${prefix}WebhookEndpointCreate`),
    update: z
      .object({
        url: Url.optional(),
        events: events(product).optional(),
        description: Description.nullable().optional(),
        enabled: z.boolean().optional(),
      })
      .strict()
      .openapi(`${prefix}WebhookEndpointUpdate`),
  };
}

export const ENDPOINT_BODIES = { sig: endpointBodies("sig"), archive: endpointBodies("archive") };

export const Limit = queryInteger({ min: 1, max: 100 }).default(20).openapi({ description: "1 to 100, default 20" });
export const Cursor = z.string().max(4096).optional().openapi({ description: "The previous page's next_cursor" });
export const WebhookIdParam = z.object({ webhook_id: Identifier.openapi({ param: { name: "webhook_id", in: "path" } }) });
export const DeliveryParams = WebhookIdParam.extend({ delivery_id: Identifier.openapi({ param: { name: "delivery_id", in: "path" } }) });

export function endpointJson(e: EndpointRow) {
  return {
    webhook_id: e.webhook_id,
    product: e.product,
    url: e.url,
    description: e.description,
    events: JSON.parse(e.events) as string[],
    enabled: e.enabled === 1,
    disabled_reason: (e.disabled_reason as "manual" | "failing" | null) ?? null,
    secret_version: e.secret_version,
    previous_secret_expires_at: e.previous_expires_at && Date.parse(e.previous_expires_at) > Date.now() ? e.previous_expires_at : null,
    failing_since: e.failing_since,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

export function deliveryJson(d: DeliveryRow) {
  return {
    delivery_id: d.delivery_id,
    webhook_id: d.webhook_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    trigger: d.trigger,
    attempts: d.attempts,
    next_attempt_at: d.status === "pending" ? d.next_attempt_at : null,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: d.created_at,
    completed_at: d.completed_at,
  };
}

export function attemptJson(a: AttemptRow) {
  return {
    attempt_id: a.attempt_id,
    delivery_id: a.delivery_id,
    event_id: a.event_id,
    event_type: a.event_type,
    attempt: a.attempt,
    trigger: a.trigger as "event" | "manual" | "test",
    started_at: a.started_at,
    duration_ms: a.duration_ms,
    status_code: a.status_code,
    error: a.error,
    response_body: a.response_body,
    succeeded: a.succeeded === 1,
  };
}
