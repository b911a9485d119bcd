import { z } from "@hono/zod-openapi";
import type { App } from "../app";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import { Identifier } from "../http/schemas";
import { invalidField, notFound } from "../http/problem";
import { MAX_METADATA_BYTES, Metadata } from "../domain/check-request";
import { SESSION_DEFAULT_TTL_S, SESSION_MAX_TTL_S, SESSION_MIN_TTL_S, publicSessionId, sessionIdOf, sessionJobId } from "../domain/session";
import { createSession } from "../services/sessions";
import { getLatestPolicy } from "../storage/policies";
import { subjectsRepo } from "../storage/subjects";
import { sessionsRepo } from "../storage/sessions";
import { recordAudit } from "../storage/audit";
import { liveCapture } from "../../durable-objects/live-capture-client";

// SessionCreate and Session (spec 2.7 leaves them unshown) are designed here; see docs/live-capture.md.

/** Bounds the JSON body: a few identifiers and the metadata. */
const MAX_SESSION_BODY = MAX_METADATA_BYTES + 4096;

const SessionCreate = z
  .strictObject({
    subject_reference: Identifier.openapi({ description: "The enrolled subject the session captures and checks for" }),
    expires_in: z
      .number()
      .int()
      .min(SESSION_MIN_TTL_S)
      .max(SESSION_MAX_TTL_S)
      .optional()
      .openapi({ description: `Lifetime in seconds, ${SESSION_MIN_TTL_S} to ${SESSION_MAX_TTL_S}; default ${SESSION_DEFAULT_TTL_S}` }),
    policy: Identifier.optional().openapi({
      description: "Policy of the session's check (its latest version when the check runs); default `default`",
    }),
    input_type: z
      .string()
      .regex(/^[a-z_]{1,32}$/, "must be 1 to 32 characters of [a-z_]")
      .optional()
      .openapi({ description: "input_type recorded on the check and used for live guidance; default `photo`" }),
    reference: z.string().min(1).max(128).optional().openapi({ description: "The check reference recorded on the session's check" }),
    process: z.string().min(1).max(64).optional().openapi({ description: "The business process recorded on the session's check" }),
    metadata: Metadata.optional().openapi({ description: "Stored as the check's metadata" }),
  })
  .openapi("SessionCreate", {
    description: "Designed here. Everything the check needs besides the captured image is fixed by the integrator's server.",
  });

const Session = z
  .object({
    session_id: z.string().openapi({ example: "ses_4fT0aZ9bQw1LmN2x" }),
    token: z
      .string()
      .openapi({ description: "`svc_ses_...`, shown only in this response; only its hash is stored", example: "svc_ses_1u..." }),
    subject_reference: z.string(),
    policy: z.string(),
    input_type: z.string(),
    reference: z.string().nullable(),
    process: z.string().nullable(),
    created_at: z.string().openapi({ format: "date-time" }),
    expires_at: z.string().openapi({ format: "date-time" }),
    job_id: z.string().openapi({ description: "The job id of the session's one streamed check (read it with GET /sig/checks/{job_id})" }),
    status_url: z.string(),
    live_url: z.string().openapi({ description: "The live WebSocket (wss) for this session" }),
    capture_url: z.string().openapi({ description: "The capture page with the token in the URL fragment (never sent to a server)" }),
  })
  .openapi("Session", {
    description:
      "Designed here. A session allows the live WebSocket until it expires and exactly one streamed check for its subject, whose job id is `job_id`.",
  });

const SessionParams = z.object({
  session_id: z.string().openapi({ param: { name: "session_id", in: "path" }, example: "ses_4fT0aZ9bQw1LmN2x" }),
});

const create = defineRoute(
  { permission: "sig:checks:create", idempotency: "none", billing: true },
  {
    method: "post",
    path: "/sig/sessions",
    tags: ["sessions"],
    summary: "Mint a client session token for one subject (shown once)",
    description:
      "No Idempotency-Key: a retry mints another session. The token works only on GET /sig/live and on one streamed POST /sig/checks " +
      "(spec 4.2 rule 6) until it expires, is revoked, its subject is deleted, or its organisation (or one above) is suspended. Audited as session.create.",
    "x-max-body": MAX_SESSION_BODY,
    request: { body: { required: true, content: { "application/json": { schema: SessionCreate } } } },
    responses: {
      201: {
        description: "The session, with its token shown once",
        headers: { "Cache-Control": { description: "no-store", schema: { type: "string" } } },
        content: { "application/json": { schema: Session } },
      },
      ...problems(...AUTH_PROBLEMS, 402, 404, 413, 415),
    },
  },
);

const revoke = defineRoute(
  { permission: "sig:checks:create" },
  {
    method: "delete",
    path: "/sig/sessions/{session_id}",
    tags: ["sessions"],
    summary: "Revoke a session (204 also when already revoked); its live connections close within 30 s",
    description: "Audited as session.revoke.",
    request: { params: SessionParams },
    responses: { 204: { description: "Revoked" }, ...problems(401, 403, 404, 421, 429) },
  },
);

export function registerSessionRoutes(app: App): void {
  app.openapi(create, async (c) => {
    const body = c.req.valid("json");
    const tenant = c.get("tenant");
    const caller = c.get("caller");
    if (!(await subjectsRepo(tenant.store.db).get(tenant.org.id, body.subject_reference))) throw notFound("subject");
    const policyName = body.policy ?? "default";
    if (!(await getLatestPolicy(tenant.store.db, { id: tenant.org.id, createdAt: tenant.org.createdAt }, policyName))) {
      throw invalidField("body.policy", `no policy ${policyName} exists`);
    }
    const { token, row } = await createSession(tenant.store, tenant.org, caller.actor, {
      subjectReference: body.subject_reference,
      expiresIn: body.expires_in,
      policy: body.policy,
      inputType: body.input_type,
      reference: body.reference,
      process: body.process,
      metadata: body.metadata,
    });
    const sessionId = publicSessionId(row.sessionId);
    await recordAudit(tenant.store.db, {
      orgId: tenant.org.id,
      actor: caller.actor,
      action: "session.create",
      target: sessionId,
      detail: { subject_reference: row.subjectReference, expires_at: row.expiresAt },
      requestId: c.get("requestId"),
    });
    const origin = new URL(c.req.url).origin;
    const jobId = sessionJobId(row.sessionId);
    return c.json(
      {
        session_id: sessionId,
        token,
        subject_reference: row.subjectReference,
        policy: policyName,
        input_type: row.inputType,
        reference: row.reference,
        process: row.process,
        created_at: row.createdAt,
        expires_at: row.expiresAt,
        job_id: jobId,
        status_url: `${origin}/sig/checks/${jobId}`,
        live_url: `${origin.replace(/^http/, "ws")}/sig/live`,
        capture_url: `${origin}/capture#session=${token}&subject=${encodeURIComponent(row.subjectReference)}`,
      },
      201,
      { "Cache-Control": "no-store" },
    );
  });

  app.openapi(revoke, async (c) => {
    const tenant = c.get("tenant");
    const id = sessionIdOf(c.req.valid("param").session_id);
    const repo = sessionsRepo(tenant.store.db);
    if (id === null || !(await repo.get(tenant.org.id, id))) throw notFound("session");
    await repo.revoke(tenant.org.id, id, new Date().toISOString());
    await recordAudit(tenant.store.db, {
      orgId: tenant.org.id,
      actor: c.get("caller").actor,
      action: "session.revoke",
      target: publicSessionId(id),
      requestId: c.get("requestId"),
    });
    // The live object re-checks its connections at least every 30 s anyway; asking now cuts them at once.
    c.executionCtx.waitUntil(
      liveCapture(c.env, tenant.org.id)
        .recheckNow()
        .catch(() => undefined),
    );
    return c.body(null, 204);
  });
}
