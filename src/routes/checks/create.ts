import { z } from "@hono/zod-openapi";
import { wantsEventStream } from "../../http/accept";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { App } from "../../app";
import type { AppEnv } from "../../http/context";
import { defineRoute, problems } from "../../http/route";
import { absoluteUrl } from "../../http/location";
import { ProblemError, invalidField, problemDocument } from "../../http/problem";
import { jsonPart } from "../../http/multipart";
import { DECODE_BUDGET_MEGAPIXELS } from "../../domain/decode-budget";
import { assertQuota } from "../../http/billing";
import { idempotencyOf, IDEMPOTENCY_HEADER } from "../../http/idempotency";
import { newId } from "../../domain/ids";
import { chooseMode, type JobMode } from "../../domain/job";
import { jobIdFromKey } from "../../domain/check-request";
import { DEFAULT_POLICY_NAME } from "../../domain/policy";
import { getLatestPolicy } from "../../storage/policies";
import { createJob } from "../../services/checks";
import { renderResult } from "../../services/check-results";
import type { CheckRuns } from "../../services/check-runs";
import { configOf } from "../../config";
import { services } from "../../http/services";
import { sessionsRepo, type SessionRow } from "../../storage/sessions";
import { sessionJobId } from "../../domain/session";
import { templatesRepo } from "../../storage/templates";
import { parseCheckBody, prepareItems, requestField } from "./inputs";
import { CheckAccepted, CheckRequestDoc, CheckResultSchema } from "./schemas";
import { CHECK_STREAM_MEDIA, CheckStreamEvent } from "./stream-schemas";
import { logError } from "../../util/log";

const createCheck = defineRoute(
  { permission: "sig:checks:create", credentials: ["api_key", "user", "session"], billing: true },
  {
    method: "post",
    path: "/sig/checks",
    tags: ["checks"],
    summary: "Check documents against subjects' references (synchronous, queued or streamed)",
    description:
      "One item of at most 10 pages is checked within the request (200 CheckResult) within its 30 s budget; 503 busy or 504 timeout " +
      "(with job_id and status_url) when it cannot be, and the job goes on through the queue. Anything larger is queued: 202. " +
      "`Accept: text/event-stream` (named with a quality above 0 and at least that of JSON; `q=0` refuses it) with exactly one item streams `received`, `quality`, `located`, `comparing`, then `decision` " +
      "or `error`, with a `: keep-alive` comment every 10 s; its Idempotency-Key is not replayable (409 idempotency_not_replayable). " +
      "job_id is request.job_id, else the Idempotency-Key (which must then be a valid identifier). " +
      `Each distinct document is decoded once at the request, however many items and references name it. A request may make the service decode at most ${DECODE_BUDGET_MEGAPIXELS} megapixels, ` +
      "counting the first page of each distinct document once and, for the checks, each item's document and each of its references once per item; " +
      "past that it is refused with 413 too_large (`limit: decoded_megapixels`, `limit_megapixels`).",
    request: {
      body: {
        // Not "required": that would run the JSON validator on multipart bodies too. An empty body is a 400 below.
        required: false,
        content: {
          "multipart/form-data": {
            schema: z
              .object({ request: jsonPart("CheckRequest as JSON") })
              .catchall(z.any())
              .openapi({
                description:
                  "A JSON part `request` (CheckRequest) and one file part per uploaded document, named as the items name them. " +
                  "Items may also name {url} inputs, fetched as in a JSON body (each distinct URL once, from the allowlist, under the shared deadline).",
              }),
            // The JSON part may be a text field or a file part typed JSON (src/http/multipart.ts).
            encoding: { request: { contentType: "application/json, text/plain" } },
          },
          "application/json": { schema: CheckRequestDoc },
        },
      },
    },
    responses: {
      200: {
        description: "The item was checked within the request (or the event stream)",
        content: { "application/json": { schema: CheckResultSchema }, "text/event-stream": CHECK_STREAM_MEDIA },
      },
      202: {
        description: "Queued",
        headers: { Location: { description: "status_url", schema: { type: "string" } } },
        content: { "application/json": { schema: CheckAccepted } },
      },
      ...problems(400, 401, 402, 403, 408, 409, 413, 415, 421, 422, 429, 502, 503, 504),
      504: {
        ...problems(504)[504],
        description:
          "Timeout: the item ran past its budget (job_id, status_url; the job goes on), or the URL fetches past their deadline (reason fetch_deadline)",
        headers: {
          "Retry-After": { description: "With job_id: seconds before reading the job at status_url", schema: { type: "integer" } },
        },
      },
    },
  },
);

function statusUrl(c: Context<AppEnv>, jobId: string): string {
  return absoluteUrl(c, `/sig/checks/${jobId}`);
}

/**
 * The answer for a job the request could not finish, which goes on through the queue: 504 timeout past the
 * item's budget, otherwise 503 busy (spec 4.2 rule 4), whose detail says whether no slot freed up or the
 * inline run failed on our side (the queue then retries it).
 */
function continuing(outcome: "busy" | "timeout" | "failed", c: Context<AppEnv>, jobId: string): ProblemError {
  const code = outcome === "timeout" ? "timeout" : "busy";
  const detail =
    outcome === "busy"
      ? "No capacity freed up within the item's budget; the job goes on asynchronously."
      : outcome === "failed"
        ? "The check could not finish in this request; the job goes on asynchronously."
        : "The item ran past its budget; the job goes on asynchronously.";
  return new ProblemError(code, `${detail} Read it with GET /sig/checks/${jobId}.`, {
    extensions: { job_id: jobId, status_url: statusUrl(c, jobId) },
    headers: { "Retry-After": "5" },
  });
}

/** Session tokens: one streamed item of the session's subject, with nothing but its file (spec 4.2 rule 6). */
function assertSessionRules(c: Context<AppEnv>, wantsStream: boolean, body: Awaited<ReturnType<typeof parseCheckBody>>): void {
  const caller = c.get("caller");
  if (caller.kind !== "session") return;
  const deny = (what: string) => new ProblemError("permission_denied", `A session token may not send ${what}.`);
  if (body.request.job_id !== undefined) throw invalidField(requestField(body.multipart, "job_id"), "may not be sent with a session token");
  if (!wantsStream) throw deny("a check that is not streamed (send Accept: text/event-stream)");
  if (body.request.policy !== undefined) throw deny("policy");
  // A multipart body may name {url} inputs too: a session sends its one document as a file part.
  if (body.items.some((it) => [it.file, ...it.references].some((s) => "url" in s))) throw deny("URL inputs");
  if (body.items.length !== 1) throw invalidField(requestField(body.multipart, "items"), "a session token checks exactly one item");
  const item = body.items[0];
  if (item.references.length > 0) throw deny("references");
  if (item.target) throw deny("target");
  if (item.templateId) throw deny("template_id");
  if (item.subjectReference !== caller.subjectReference) throw deny("a subject other than the session's");
}

/**
 * What the integrator's server fixed when minting the session applies to its check: policy, input type,
 * reference, process and metadata (the client cannot change what the server recorded).
 */
function applySession(body: Awaited<ReturnType<typeof parseCheckBody>>, session: SessionRow): void {
  const item = body.items[0];
  item.inputType = session.inputType;
  item.reference = session.reference ?? item.reference;
  item.process = session.process ?? item.process;
  if (session.policy) body.request.policy = session.policy;
  if (session.metadata) {
    body.request.metadata = JSON.parse(session.metadata) as Record<string, unknown>;
    // The item's own metadata would replace the request's on the result.
    item.metadata = null;
  }
}

export function registerCreateCheck(app: App): void {
  // The stream's record schemas are named only from its media type's `x-events`, which the generator does not follow.
  app.openAPIRegistry.register("CheckStreamEvent", CheckStreamEvent);
  app.openapi(createCheck, async (c) => {
    const tenant = c.get("tenant");
    const caller = c.get("caller");
    const wantsStream = wantsEventStream(c.req.header("Accept"));
    const { engine, checkContext: ctx, checkRuns } = services(c);

    const body = await parseCheckBody(c, () => c.req.valid("json" as never));
    assertSessionRules(c, wantsStream, body);
    const session = caller.kind === "session" ? await sessionsRepo(tenant.store.db).get(tenant.org.id, caller.sessionId!) : null;
    if (session) applySession(body, session);
    for (const [i, id] of [...new Set(body.items.map((it) => it.templateId))].entries()) {
      if (id && !(await templatesRepo(tenant.store.db).get(tenant.org.id, id))) {
        const at = body.items.findIndex((it) => it.templateId === id);
        throw invalidField(requestField(body.multipart, "items", at < 0 ? i : at, "template_id"), `no template ${id} exists`);
      }
    }
    if (wantsStream && body.items.length !== 1)
      throw invalidField(requestField(body.multipart, "items"), "a streamed check holds exactly one item");

    const key = idempotencyOf(c)?.key ?? null;
    // A session's one check has the job id announced when the session was minted.
    let jobId = session ? sessionJobId(session.sessionId) : (body.request.job_id ?? (key === null ? null : jobIdFromKey(key)));
    if (jobId === null) {
      if (caller.kind !== "session") {
        throw invalidField(
          requestField(body.multipart, "job_id"),
          `is needed: the ${IDEMPOTENCY_HEADER} is not a valid job id (1 to 128 of [A-Za-z0-9._-]), so it cannot name the job`,
        );
      }
      jobId = newId("chk");
    }

    const policyName = body.request.policy ?? DEFAULT_POLICY_NAME;
    const policy = await getLatestPolicy(tenant.store.db, { id: tenant.org.id, createdAt: tenant.org.createdAt }, policyName);
    if (!policy) throw invalidField(requestField(body.multipart, "policy"), `no policy ${policyName} exists`);
    await assertQuota(c.env, tenant, body.items.length);

    const prepared = await prepareItems(engine, body);
    const mode: JobMode = chooseMode(
      wantsStream,
      prepared.map((p) => p.pages),
    )!;
    if (session && !(await sessionsRepo(tenant.store.db).claimCheck(tenant.org.id, session.sessionId, new Date().toISOString()))) {
      throw new ProblemError("conflict", `This session's one check has been made; read it with GET /sig/checks/${jobId}.`, {
        extensions: { job_id: jobId, status_url: statusUrl(c, jobId) },
      });
    }
    try {
      await createJob(ctx, { jobId, mode, policy, metadata: body.request.metadata ?? null, actor: caller.actor, items: prepared });
    } catch (err) {
      // Nothing was kept: the session may try its check again.
      if (session) await sessionsRepo(tenant.store.db).releaseCheck(tenant.org.id, session.sessionId);
      throw err;
    }

    if (mode === "queued") {
      await checkRuns.enqueueJob(
        jobId,
        prepared.map((p) => p.item.index),
      );
      const url = statusUrl(c, jobId);
      return c.json({ job_id: jobId, status: "queued" as const, item_count: prepared.length, status_url: url }, 202, { Location: url });
    }
    if (mode === "stream") return streamCheck(c, checkRuns, jobId);
    return inlineCheck(c, checkRuns, jobId);
  });
}

async function inlineCheck(c: Context<AppEnv>, checkRuns: CheckRuns, jobId: string) {
  const outcome = await checkRuns.runInline(jobId);
  if (outcome.kind === "done") return c.json(renderResult(outcome.result, new URL(c.req.url).origin), 200);
  if (outcome.kind === "failed") logError("inline check failed; queued", outcome.error, { job_id: jobId });
  await checkRuns.handOff(jobId);
  // The job exists and goes on: this answer is a committed outcome, replayed for the same key.
  idempotencyOf(c)?.commitOutcome();
  throw continuing(outcome.kind, c, jobId);
}

function streamCheck(c: Context<AppEnv>, checkRuns: CheckRuns, jobId: string) {
  const docs = configOf(c.env).docsUrl;
  const requestId = c.get("requestId");
  const keepAliveMs = configOf(c.env).checks.keepAliveMs;
  // A stream cannot be replayed: a retry of its key points at the job instead.
  const marked = idempotencyOf(c)?.markNotReplayable(jobId);
  return streamSSE(
    c,
    async (stream) => {
      await marked;
      const keepAlive = setInterval(() => {
        stream.write(": keep-alive\n\n").catch(() => undefined);
      }, keepAliveMs);
      try {
        await stream.writeSSE({ event: "received", data: JSON.stringify({ job_id: jobId }) });
        const outcome = await checkRuns.runInline(jobId, async (e) => {
          if (e.type === "quality") await stream.writeSSE({ event: "quality", data: JSON.stringify({ page: e.page, ...e.quality }) });
          else if (e.type === "located") await stream.writeSSE({ event: "located", data: JSON.stringify({ signatures: e.signatures }) });
          else await stream.writeSSE({ event: "comparing", data: JSON.stringify({ reference_count: e.referenceCount }) });
        });
        if (outcome.kind === "done") {
          await stream.writeSSE({ event: "decision", data: JSON.stringify(renderResult(outcome.result, new URL(c.req.url).origin)) });
          return;
        }
        if (outcome.kind === "failed") logError("streamed check failed; queued", outcome.error, { job_id: jobId });
        await checkRuns.handOff(jobId);
        const problem = continuing(outcome.kind, c, jobId);
        await stream.writeSSE({ event: "error", data: JSON.stringify(problemDocument(problem, docs, requestId)) });
      } finally {
        clearInterval(keepAlive);
      }
    },
    async (err, stream) => {
      logError("check stream failed; queued", err, { job_id: jobId });
      await checkRuns.handOff(jobId).catch(() => undefined);
      const problem = new ProblemError("internal_error", "The stream failed; read the job for its outcome.", {
        extensions: { job_id: jobId, status_url: statusUrl(c, jobId) },
      });
      await stream.writeSSE({ event: "error", data: JSON.stringify(problemDocument(problem, docs, requestId)) });
    },
  );
}
