import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { problems } from "./route";

/**
 * GET /openapi.json: the document generated from the route contracts, completed with what every route
 * shares: security schemes, the common request and response headers, and the problem responses the
 * pipeline itself can give (authentication, permission, region, rate limit, idempotency, body limits).
 */

const TAGS = [
  { name: "checks", description: "Check documents and read the results" },
  { name: "subjects", description: "Subjects and their reference signatures" },
  { name: "sessions", description: "Client session tokens and live capture" },
  { name: "usage", description: "Usage of the current or a past UTC month" },
  { name: "policies", description: "Versioned decision policies" },
  { name: "templates", description: "Form templates" },
  { name: "bucket-keys", description: "Object-storage bucket keys" },
  { name: "webhooks", description: "Webhook endpoints" },
  { name: "platform", description: "Platform routes (designed here; the spec puts them elsewhere)" },
  { name: "operations", description: "Unauthenticated operational routes" },
];

type Operation = {
  tags?: string[];
  parameters?: unknown[];
  responses?: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>;
  security?: Record<string, string[]>[];
  "x-permission"?: string;
  "x-credentials"?: string[];
  "x-idempotency"?: string;
  "x-billing"?: boolean;
  "x-rate-limit"?: string;
  "x-max-body"?: number;
  requestBody?: unknown;
};

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

/** The Operation Object's fixed fields (OpenAPI 3.1, 4.8.10); anything else must be an `x-` extension. */
const OPERATION_FIELDS = new Set([
  "tags",
  "summary",
  "description",
  "externalDocs",
  "operationId",
  "parameters",
  "requestBody",
  "responses",
  "callbacks",
  "deprecated",
  "security",
  "servers",
]);
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

function registerComponents(app: OpenAPIHono<AppEnv>): void {
  const reg = app.openAPIRegistry;
  reg.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key `svc_<env>_<opaque>` in `Authorization: Bearer`.",
  });
  reg.registerComponent("securitySchemes", "dashboardJwt", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A dashboard user's RS256 JWT (at most 8192 bytes) from the identity provider; its `permissions` claim applies.",
  });
  reg.registerComponent("securitySchemes", "sessionToken", {
    type: "http",
    scheme: "bearer",
    description: "A client session token `svc_ses_...`, accepted only where a route lists it.",
  });
  reg.registerComponent("parameters", "ServiceVersion", {
    name: "Service-Version",
    in: "header",
    required: false,
    description:
      "The interface version (YYYY-MM-DD) for this request; overrides the organisation's pin. Unknown, malformed or sunset: 400 invalid_version.",
    schema: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$", example: "2026-09-27" },
  });
  reg.registerComponent("parameters", "XRequestId", {
    name: "X-Request-Id",
    in: "header",
    required: false,
    description: "Echoed on the response when it is 1 to 128 characters of [A-Za-z0-9._-]; otherwise a `req_<ulid>` is minted.",
    schema: { type: "string", pattern: "^[A-Za-z0-9._-]{1,128}$" },
  });
  reg.registerComponent("parameters", "ServiceOrg", {
    name: "Service-Org",
    in: "header",
    required: false,
    description: "Act in this descendant organisation (requires org:children:access); audited there as org.act_as.",
    schema: { type: "string" },
  });
  reg.registerComponent("parameters", "IdempotencyKey", {
    name: "Idempotency-Key",
    in: "header",
    required: true,
    description:
      "1 to 255 visible ASCII characters, kept 24 h per tenant. Same key and body: the original response with `Idempotent-Replayed: true`; different body (even while the first request runs): 409 idempotency_conflict; same body while the first request still runs: 409 idempotency_in_progress.",
    schema: { type: "string", pattern: "^[\\x21-\\x7E]{1,255}$" },
  });
  reg.registerComponent("parameters", "IdempotencyKeyOptional", {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Optional on this route (spec 4.1 exempts it), but honoured when sent: 1 to 255 visible ASCII characters, kept 24 h per tenant. Same key and body: the original response with `Idempotent-Replayed: true`, so a retry after a lost response does not repeat the change; different body: 409 idempotency_conflict; same body while the first request still runs: 409 idempotency_in_progress. Without a key every request runs.",
    schema: { type: "string", pattern: "^[\\x21-\\x7E]{1,255}$" },
  });
  reg.registerComponent("headers", "XRequestId", { description: "The request's id", schema: { type: "string" } });
  reg.registerComponent("headers", "ServiceVersion", { description: "The version used for this response", schema: { type: "string" } });
  reg.registerComponent("headers", "ServiceLatestVersion", { description: "The latest version", schema: { type: "string" } });
  reg.registerComponent("headers", "Deprecation", {
    description: "Deprecated version: `@<unix seconds>` (RFC 9745)",
    schema: { type: "string" },
  });
  reg.registerComponent("headers", "Sunset", { description: "Deprecated version: its sunset date (RFC 8594)", schema: { type: "string" } });
  reg.registerComponent("headers", "Link", {
    description: 'Deprecated version: `<{docs}/changelog#<date>>; rel="deprecation"` and `<{docs}/upgrading#<date>>; rel="sunset"`',
    schema: { type: "string" },
  });
  reg.registerComponent("headers", "IdempotentReplayed", {
    description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key and body",
    schema: { type: "string", enum: ["true"] },
  });
  reg.registerComponent("headers", "RetryAfter", { description: "Seconds to wait before retrying", schema: { type: "integer" } });
  reg.registerComponent("parameters", "IdempotencyKeyExceptSessions", {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Required with an API key or a dashboard token (400 without it); a session token sends none (spec 4.2 rule 6), as its streamed check is never replayed. " +
      "1 to 255 visible ASCII characters, kept 24 h per tenant. Same key and body: the original response with `Idempotent-Replayed: true`; different body: 409 idempotency_conflict; first request still running: 409 idempotency_in_progress.",
    schema: { type: "string", pattern: "^[\\x21-\\x7E]{1,255}$" },
  });
}

/** The problem statuses the pipeline can give a route, whatever its handler does. */
function pipelineStatuses(op: Operation, path: string): number[] {
  const permission = op["x-permission"] ?? "none";
  // 400 invalid_version: Service-Version is checked on every route, before anything else.
  const out: number[] = [400];
  if (permission === "operator") out.push(401);
  // 404: a Service-Org that names no organisation below the caller's.
  else if (permission !== "none") out.push(401, 403, 404, 421, 429, 503);
  if (op["x-idempotency"] === "required" || op["x-idempotency"] === "optional") out.push(400, 409);
  if (op["x-billing"]) out.push(402);
  if (op.requestBody) out.push(400, 408, 413, 415);
  // A malformed id in a path names nothing (spec 2.1).
  if (path.includes("{")) out.push(404);
  return out;
}

function complete(op: Operation, path: string): void {
  // The generator copies a route config's own members into its operation; `defineRoute` attaches its
  // resolved `rules` there (already stated as the x- members), which OpenAPI does not allow.
  for (const key of Object.keys(op)) {
    if (!OPERATION_FIELDS.has(key) && !key.startsWith("x-")) delete (op as Record<string, unknown>)[key];
  }
  const permission = op["x-permission"] ?? "none";
  const params = (op.parameters ??= []);
  params.push(ref("parameters", "XRequestId"), ref("parameters", "ServiceVersion"));
  if (permission !== "none" && permission !== "operator") {
    params.push(ref("parameters", "ServiceOrg"));
    const creds = op["x-credentials"] ?? ["api_key", "user"];
    op.security ??= [
      ...(creds.includes("api_key") ? [{ apiKey: [] }] : []),
      ...(creds.includes("user") ? [{ dashboardJwt: [] }] : []),
      ...(creds.includes("session") ? [{ sessionToken: [] }] : []),
    ];
  }
  // Session tokens send no key (the idempotency middleware lets them through): where they are accepted it is required of the others only.
  if (op["x-idempotency"] === "required")
    params.push(ref("parameters", op["x-credentials"]?.includes("session") ? "IdempotencyKeyExceptSessions" : "IdempotencyKey"));
  if (op["x-idempotency"] === "optional") params.push(ref("parameters", "IdempotencyKeyOptional"));
  if (permission === "none") op.security ??= [];

  const responses = (op.responses ??= {});
  // Added after generation, so the Problem schema goes in as a reference to its component: the zod
  // object itself would be serialised as its internals.
  for (const [status, problem] of Object.entries(problems(...pipelineStatuses(op, path), 500))) {
    responses[status] ??= {
      description: problem.description,
      content: { "application/problem+json": { schema: ref("schemas", "Problem") } },
    };
  }
  const replayable = op["x-idempotency"] === "required" || op["x-idempotency"] === "optional";
  for (const [status, response] of Object.entries(responses)) {
    response.headers = {
      "X-Request-Id": ref("headers", "XRequestId"),
      "Service-Version": ref("headers", "ServiceVersion"),
      "Service-Latest-Version": ref("headers", "ServiceLatestVersion"),
      Deprecation: ref("headers", "Deprecation"),
      Sunset: ref("headers", "Sunset"),
      Link: ref("headers", "Link"),
      ...(replayable && status.startsWith("2") ? { "Idempotent-Replayed": ref("headers", "IdempotentReplayed") } : {}),
      // 409 idempotency_in_progress carries Retry-After: 1 (a key's first request is still running).
      ...(status === "429" || status === "503" || (status === "409" && replayable) ? { "Retry-After": ref("headers", "RetryAfter") } : {}),
      ...(response.headers ?? {}),
    };
  }
}

export function registerOpenApi(app: OpenAPIHono<AppEnv>): void {
  registerComponents(app);
  app.get("/openapi.json", (c) => {
    const doc = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Countersign API",
        version: c.get("version"),
        description:
          "Handwritten-signature verification. Members marked as designed here fill in what the interface specification leaves unshown.",
      },
      servers: [{ url: new URL(c.req.url).origin }],
      tags: TAGS,
    });
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of METHODS) {
        const op = (item as Record<string, Operation | undefined>)[method];
        if (op) complete(op, path);
      }
    }
    return c.json(doc);
  });
}
