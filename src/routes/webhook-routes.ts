/**
 * The webhook endpoint routes, shared by both products: the verification product's under
 * /sig/webhooks and the archive product's under /archive/webhooks. One factory states each route once;
 * a product chooses which routes it offers and with which permissions.
 */
import { configOf } from "../config";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { App } from "../app";
import type { WebhookProduct } from "../domain/webhook-events";
import type { AppEnv } from "../http/context";
import type { Permission } from "../domain/tenancy";
import { decodeCursor, encodeCursor } from "../http/cursor";
import { invalidField, notFound } from "../http/problem";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import { recordAudit } from "../storage/audit";
import { Identifier } from "../http/schemas";
import { webhooksRepo } from "../storage/webhooks";
import {
  WithSecret,
  RotatedSchema,
  EndpointListSchema,
  DeliveryListSchema,
  AttemptListSchema,
  DeliveryDetailSchema,
  ENDPOINT_BODIES,
  Limit,
  Cursor,
  WebhookIdParam,
  DeliveryParams,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  endpointJson,
  deliveryJson,
  attemptJson,
} from "./webhook-schemas";
import {
  assertEndpointUrl,
  assertEvents,
  createEndpoint,
  mustGetEndpoint,
  redeliver,
  rotateSecret,
  testSend,
  type WebhookDeps,
} from "../services/webhooks";

export type EndpointRoute =
  | "list"
  | "create"
  | "read"
  | "update"
  | "delete"
  | "rotate"
  | "deliveries"
  | "delivery"
  | "attempts"
  | "test"
  | "redeliver";

export interface ProductRoutes {
  product: WebhookProduct;
  base: string;
  tag: string;
  /** Reading (lists, log). */
  read: Permission;
  /** Every change. */
  manage: Permission;
  /**
   * Idempotency-Key on the product's POSTs (create, test, redeliver): spec 4.1 exempts /sig/webhooks, so
   * there it is optional, honoured when sent (docs/webhooks.md); the archive's are not exempt.
   */
  createIdempotency: "required" | "optional";
  routes: EndpointRoute[];
  /** The product's name in route summaries. */
  label: string;
}

function deps(c: Context<AppEnv>): WebhookDeps {
  const { org, store } = c.get("tenant");
  return { env: c.env, org, store };
}

async function audit(c: Context<AppEnv>, action: string, target: string, detail?: Record<string, unknown>) {
  const { org, store } = c.get("tenant");
  await recordAudit(store.db, { orgId: org.id, actor: c.get("caller").actor, action, target, detail, requestId: c.get("requestId") });
}

async function pageOf<T>(
  c: Context<AppEnv>,
  route: string,
  cursor: string | undefined,
  limit: number,
  load: (after: string | undefined) => Promise<T[]>,
  idOf: (row: T) => string,
): Promise<{ rows: T[]; next: string | null }> {
  const cursorRoute = `${route} ${c.get("tenant").org.id}`;
  const after = cursor !== undefined ? await decodeCursor<string>(configOf(c.env).cursorSecret, cursorRoute, cursor) : undefined;
  const results = await load(after);
  const rows = results.slice(0, limit);
  const next = results.length > limit ? await encodeCursor(configOf(c.env).cursorSecret, cursorRoute, idOf(rows[rows.length - 1])) : null;
  return { rows, next };
}

export function registerEndpointRoutes(app: App, p: ProductRoutes): void {
  const has = (r: EndpointRoute) => p.routes.includes(r);
  const json = <S extends z.ZodType>(schema: S, description: string) => ({ description, content: { "application/json": { schema } } });
  const tags = [p.tag];

  if (has("list")) {
    const route = defineRoute(
      { permission: p.read },
      {
        method: "get",
        path: p.base,
        tags,
        summary: `List the ${p.label} webhook endpoints, newest first`,
        request: { query: z.object({ limit: Limit, cursor: Cursor }) },
        responses: { 200: json(EndpointListSchema, "Endpoints (never their secrets)"), ...problems(...AUTH_PROBLEMS) },
      },
    );
    app.openapi(route, async (c) => {
      const { limit, cursor } = c.req.valid("query");
      const { org, store } = c.get("tenant");
      const page = await pageOf(
        c,
        `GET ${p.base}`,
        cursor,
        limit,
        (after) => webhooksRepo(store.db).listEndpoints(org.id, p.product, { limit, after }),
        (r) => r.webhook_id,
      );
      return c.json({ endpoints: page.rows.map(endpointJson), next_cursor: page.next }, 200);
    });
  }

  if (has("create")) {
    const route = defineRoute(
      { permission: p.manage, idempotency: p.createIdempotency },
      {
        method: "post",
        path: p.base,
        tags,
        summary: `Create a ${p.label} webhook endpoint; its signing secret is shown once, in this response`,
        request: { body: { required: true, content: { "application/json": { schema: ENDPOINT_BODIES[p.product].create } } } },
        responses: {
          201: {
            ...json(WithSecret, "The endpoint with its signing secret"),
            headers: z.object({ "Cache-Control": z.string().openapi({ example: "no-store" }) }),
          },
          ...problems(...AUTH_PROBLEMS, 409, 413, 415),
        },
      },
    );
    app.openapi(route, async (c) => {
      const body = c.req.valid("json");
      const { endpoint, secret } = await createEndpoint(deps(c), p.product, body);
      await audit(c, "webhook.create", endpoint.webhook_id, { product: p.product, url: endpoint.url, events: JSON.parse(endpoint.events) });
      c.header("Cache-Control", "no-store");
      return c.json({ ...endpointJson(endpoint), secret }, 201);
    });
  }

  if (has("read")) {
    const route = defineRoute(
      { permission: p.read },
      {
        method: "get",
        path: `${p.base}/{webhook_id}`,
        tags,
        summary: `Read a ${p.label} webhook endpoint (never its secret)`,
        request: { params: WebhookIdParam },
        responses: { 200: json(WebhookEndpointSchema, "The endpoint"), ...problems(...AUTH_PROBLEMS, 404) },
      },
    );
    app.openapi(route, async (c) => c.json(endpointJson(await mustGetEndpoint(deps(c), p.product, c.req.valid("param").webhook_id)), 200));
  }

  if (has("update")) {
    const route = defineRoute(
      { permission: p.manage },
      {
        method: "patch",
        path: `${p.base}/{webhook_id}`,
        tags,
        summary: `Change a ${p.label} endpoint's URL, events, description or enabled state (enabling clears a failing state)`,
        request: {
          params: WebhookIdParam,
          body: { required: true, content: { "application/json": { schema: ENDPOINT_BODIES[p.product].update } } },
        },
        responses: { 200: json(WebhookEndpointSchema, "The endpoint"), ...problems(...AUTH_PROBLEMS, 404, 413, 415) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      const body = c.req.valid("json");
      if (Object.keys(body).length === 0) throw invalidField("body", "name at least one of url, events, description, enabled");
      const changes: Parameters<ReturnType<typeof webhooksRepo>["updateEndpoint"]>[2] = {};
      if (body.url !== undefined) {
        assertEndpointUrl(c.env, body.url);
        changes.url = body.url;
      }
      if (body.events !== undefined) changes.events = JSON.stringify(assertEvents(p.product, body.events));
      if (body.description !== undefined) changes.description = body.description;
      if (body.enabled !== undefined) {
        changes.enabled = body.enabled ? 1 : 0;
        changes.disabled_reason = body.enabled ? null : "manual";
        if (body.enabled) changes.failing_since = null;
      }
      const now = new Date().toISOString();
      await webhooksRepo(d.store.db).updateEndpoint(d.org.id, endpoint.webhook_id, changes, now);
      await audit(c, "webhook.update", endpoint.webhook_id, body);
      const updated = await webhooksRepo(d.store.db).endpoint(d.org.id, endpoint.webhook_id);
      if (!updated) throw notFound("webhook endpoint");
      return c.json(endpointJson(updated), 200);
    });
  }

  if (has("delete")) {
    const route = defineRoute(
      { permission: p.manage },
      {
        method: "delete",
        path: `${p.base}/{webhook_id}`,
        tags,
        summary: `Delete a ${p.label} webhook endpoint with its delivery log; deliveries under way stop`,
        request: { params: WebhookIdParam },
        responses: { 204: { description: "Deleted" }, ...problems(...AUTH_PROBLEMS, 404) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      await webhooksRepo(d.store.db).deleteEndpoint(d.org.id, endpoint.webhook_id);
      await audit(c, "webhook.delete", endpoint.webhook_id, { product: p.product, url: endpoint.url });
      return c.body(null, 204);
    });
  }

  if (has("rotate")) {
    const route = defineRoute(
      // The spec exempts /sig/webhooks from Idempotency-Key, so it stays optional; but a retry after a lost
      // response must not rotate again (the client would never see the first new secret), so a key sent is
      // honoured and the response, secret included, replayed to its holder, as on POST /archive/webhooks.
      { permission: p.manage, idempotency: "optional" },
      {
        method: "post",
        path: `${p.base}/{webhook_id}/rotate-secret`,
        tags,
        summary: "Rotate the signing secret: the new one is shown once; the previous one keeps signing beside it for 24 h",
        request: { params: WebhookIdParam },
        responses: {
          200: {
            ...json(RotatedSchema, "The new secret"),
            headers: z.object({ "Cache-Control": z.string().openapi({ example: "no-store" }) }),
          },
          ...problems(...AUTH_PROBLEMS, 404),
        },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      const { secret, previousExpiresAt } = await rotateSecret(d, endpoint);
      await audit(c, "webhook.rotate_secret", endpoint.webhook_id, { secret_version: endpoint.secret_version + 1 });
      c.header("Cache-Control", "no-store");
      return c.json(
        {
          webhook_id: endpoint.webhook_id,
          secret,
          secret_version: endpoint.secret_version + 1,
          previous_secret_expires_at: previousExpiresAt,
        },
        200,
      );
    });
  }

  if (has("deliveries")) {
    const route = defineRoute(
      { permission: p.read },
      {
        method: "get",
        path: `${p.base}/{webhook_id}/deliveries`,
        tags,
        summary: "The endpoint's deliveries (one per event), newest first; kept 30 days",
        request: {
          params: WebhookIdParam,
          query: z.object({ limit: Limit, cursor: Cursor, status: z.enum(["pending", "sending", "succeeded", "failed"]).optional() }),
        },
        responses: { 200: json(DeliveryListSchema, "Deliveries"), ...problems(...AUTH_PROBLEMS, 404) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      const { limit, cursor, status } = c.req.valid("query");
      const page = await pageOf(
        c,
        `GET ${p.base}/${endpoint.webhook_id}/deliveries ${status ?? ""}`,
        cursor,
        limit,
        (after) => webhooksRepo(d.store.db).listDeliveries(d.org.id, endpoint.webhook_id, { limit, after }, status),
        (r) => r.delivery_id,
      );
      return c.json({ deliveries: page.rows.map(deliveryJson), next_cursor: page.next }, 200);
    });
  }

  if (has("delivery")) {
    const route = defineRoute(
      { permission: p.read },
      {
        method: "get",
        path: `${p.base}/{webhook_id}/deliveries/{delivery_id}`,
        tags,
        summary: "One delivery with its message and every attempt",
        request: { params: DeliveryParams },
        responses: { 200: json(DeliveryDetailSchema, "The delivery"), ...problems(...AUTH_PROBLEMS, 404) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const { webhook_id, delivery_id } = c.req.valid("param");
      const endpoint = await mustGetEndpoint(d, p.product, webhook_id);
      const repo = webhooksRepo(d.store.db);
      const delivery = await repo.delivery(d.org.id, delivery_id);
      if (!delivery || delivery.webhook_id !== endpoint.webhook_id) throw notFound("delivery");
      const [event, attempts] = await Promise.all([repo.event(d.org.id, delivery.event_id), repo.attemptsOf(d.org.id, delivery_id)]);
      return c.json(
        {
          ...deliveryJson(delivery),
          version: event?.version ?? "",
          payload: event ? (JSON.parse(event.body) as Record<string, unknown>) : null,
          attempt_log: attempts.map(attemptJson),
        },
        200,
      );
    });
  }

  if (has("attempts")) {
    const route = defineRoute(
      { permission: p.read },
      {
        method: "get",
        path: `${p.base}/{webhook_id}/attempts`,
        tags,
        summary:
          "The delivery log: every attempt (time, status code or error, duration, first KB of the answer), newest first; kept 30 days",
        request: { params: WebhookIdParam, query: z.object({ limit: Limit, cursor: Cursor, delivery_id: Identifier.optional() }) },
        responses: { 200: json(AttemptListSchema, "Attempts"), ...problems(...AUTH_PROBLEMS, 404) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      const { limit, cursor, delivery_id } = c.req.valid("query");
      const page = await pageOf(
        c,
        `GET ${p.base}/${endpoint.webhook_id}/attempts ${delivery_id ?? ""}`,
        cursor,
        limit,
        (after) => webhooksRepo(d.store.db).listAttempts(d.org.id, endpoint.webhook_id, { limit, after }, delivery_id),
        (r) => r.attempt_id,
      );
      return c.json({ attempts: page.rows.map(attemptJson), next_cursor: page.next }, 200);
    });
  }

  if (has("test")) {
    const route = defineRoute(
      { permission: p.manage, idempotency: p.createIdempotency },
      {
        method: "post",
        path: `${p.base}/{webhook_id}/test`,
        tags,
        summary: "Test send: one `webhook.test` message to this endpoint (also when disabled), one attempt, logged like any other",
        request: { params: WebhookIdParam },
        responses: {
          202: json(WebhookDeliverySchema, "The delivery, queued; follow it in the delivery log"),
          ...problems(...AUTH_PROBLEMS, 404),
        },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const endpoint = await mustGetEndpoint(d, p.product, c.req.valid("param").webhook_id);
      return c.json(deliveryJson(await testSend(d, endpoint)), 202);
    });
  }

  if (has("redeliver")) {
    const route = defineRoute(
      { permission: p.manage, idempotency: p.createIdempotency },
      {
        method: "post",
        path: `${p.base}/{webhook_id}/deliveries/{delivery_id}/redeliver`,
        tags,
        summary: "Send a finished delivery (succeeded or failed) once more, now: same message id and body, freshly signed",
        request: { params: DeliveryParams },
        responses: { 202: json(WebhookDeliverySchema, "The delivery, queued again"), ...problems(...AUTH_PROBLEMS, 404, 409) },
      },
    );
    app.openapi(route, async (c) => {
      const d = deps(c);
      const { webhook_id, delivery_id } = c.req.valid("param");
      const endpoint = await mustGetEndpoint(d, p.product, webhook_id);
      const delivery = await redeliver(d, endpoint, delivery_id);
      await audit(c, "webhook.redeliver", endpoint.webhook_id, { delivery_id });
      return c.json(deliveryJson(delivery), 202);
    });
  }
}
