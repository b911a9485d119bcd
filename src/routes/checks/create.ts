import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { App } from "../../app";
import type { AppEnv } from "../../http/context";
import { defineRoute, problems } from "../../http/route";
import { ProblemError, invalidField, problemDocument } from "../../http/problem";
import { assertQuota } from "../../http/billing";
import { idempotencyOf, IDEMPOTENCY_HEADER } from "../../http/idempotency";
import { newId } from "../../http/ids";
import { chooseMode, type JobMode } from "../../domain/job";
import { jobIdFromKey } from "../../domain/check-request";
import { DEFAULT_POLICY_NAME } from "../../domain/policy";
import { getLatestPolicy } from "../../storage/policies";
import { templatesRepo } from "../../storage/templates";
import { BudgetExceeded, createJob, discardJob, enqueueItems, runItem, type CheckContext, type RunOptions } from "../../services/checks";
import { renderResult, type StoredResult } from "../../services/check-results";
import { checkSettings, inlineSlots } from "../../services/check-capacity";
import { liveCheckEngine } from "../../services/check-engine-live";
import { parseCheckBody, prepareItems } from "./inputs";
import { CheckAccepted, CheckRequestDoc, CheckResultSchema } from "./schemas";

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
      "`Accept: text/event-stream` with exactly one item streams `received`, `quality`, `located`, `comparing`, then `decision` " +
      "or `error`, with a `: keep-alive` comment every 10 s; its Idempotency-Key is not replayable (409 idempotency_not_replayable). " +
      "job_id is request.job_id, else the Idempotency-Key (which must then be a valid identifier).",
    request: {
      body: {
        // Not "required": that would run the JSON validator on multipart bodies too. An empty body is a 400 below.
        required: false,
        content: {
          "multipart/form-data": {
            schema: z
              .object({ request: z.string().openapi({ description: "CheckRequest as JSON" }) })
              .catchall(z.any())
              .openapi({ description: "A JSON part `request` (CheckRequest) and one file part per document, named as the items name them" }),
          },
          "application/json": { schema: CheckRequestDoc },
        },
      },
    },
    responses: {
      200: {
        description: "The item was checked within the request (or the event stream)",
        content: { "application/json": { schema: CheckResultSchema }, "text/event-stream": { schema: z.string() } },
      },
      202: {
        description: "Queued",
        headers: { Location: { description: "status_url", schema: { type: "string" } } },
        content: { "application/json": { schema: CheckAccepted } },
      },
      ...problems(400, 401, 402, 403, 408, 409, 413, 415, 421, 422, 429, 502, 503, 504),
    },
  },
);

function statusUrl(c: Context<AppEnv>, jobId: string): string {
  return `${new URL(c.req.url).origin}/sig/checks/${jobId}`;
}

function continuing(code: "busy" | "timeout", c: Context<AppEnv>, jobId: string): ProblemError {
  const detail =
    code === "busy"
      ? "No capacity freed up within the item's budget; the job goes on asynchronously."
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
  if (body.request.job_id !== undefined) throw invalidField("request.job_id", "may not be sent with a session token");
  if (!wantsStream) throw deny("a check that is not streamed (send Accept: text/event-stream)");
  if (body.request.policy !== undefined) throw deny("policy");
  if (!body.multipart) throw deny("URL inputs");
  if (body.items.length !== 1) throw invalidField("request.items", "a session token checks exactly one item");
  const item = body.items[0];
  if (item.references.length > 0) throw deny("references");
  if (item.target) throw deny("target");
  if (item.templateId) throw deny("template_id");
  if (item.subjectReference !== caller.subjectReference) throw deny("a subject other than the session's");
}

export function registerCreateCheck(app: App): void {
  app.openapi(createCheck, async (c) => {
    const tenant = c.get("tenant");
    const caller = c.get("caller");
    const wantsStream = (c.req.header("Accept") ?? "").toLowerCase().includes("text/event-stream");
    const engine = liveCheckEngine();

    const body = await parseCheckBody(c, () => c.req.valid("json" as never));
    assertSessionRules(c, wantsStream, body);
    for (const [i, id] of [...new Set(body.items.map((it) => it.templateId))].entries()) {
      if (id && !(await templatesRepo(tenant.store.db).get(tenant.org.id, id))) {
        const at = body.items.findIndex((it) => it.templateId === id);
        throw invalidField(`${body.multipart ? "request." : ""}items[${at < 0 ? i : at}].template_id`, `no template ${id} exists`);
      }
    }
    if (wantsStream && body.items.length !== 1) throw invalidField(body.multipart ? "request.items" : "items", "a streamed check holds exactly one item");

    const key = idempotencyOf(c)?.key ?? null;
    let jobId = body.request.job_id ?? (key === null ? null : jobIdFromKey(key));
    if (jobId === null) {
      if (caller.kind !== "session") {
        throw invalidField("job_id", `the ${IDEMPOTENCY_HEADER} is not a valid job id (1 to 128 of [A-Za-z0-9._-]); send request.job_id`);
      }
      jobId = newId("chk");
    }

    const policyName = body.request.policy ?? DEFAULT_POLICY_NAME;
    const policy = await getLatestPolicy(tenant.store.db, { id: tenant.org.id, createdAt: tenant.org.createdAt }, policyName);
    if (!policy) throw invalidField(body.multipart ? "request.policy" : "policy", `no policy ${policyName} exists`);
    await assertQuota(c.env, tenant, body.items.length);

    const prepared = await prepareItems(engine, body);
    const mode: JobMode = chooseMode(wantsStream, prepared.map((p) => p.pages))!;
    const ctx: CheckContext = { env: c.env, org: tenant.org, store: tenant.store, engine };
    await createJob(ctx, { jobId, mode, policy, metadata: body.request.metadata ?? null, actor: caller.actor, items: prepared });

    if (mode === "queued") {
      try {
        await enqueueItems(ctx, jobId, prepared.map((p) => p.item.index));
      } catch (err) {
        // Without its messages the job would wait forever: take it back out.
        console.error("check queue unavailable", jobId, err);
        await discardJob(ctx, jobId);
        throw new ProblemError("unavailable", "The check queue is unavailable; nothing was kept. Retry the request.", { headers: { "Retry-After": "5" } });
      }
      const url = statusUrl(c, jobId);
      return c.json({ job_id: jobId, status: "queued" as const, item_count: prepared.length, status_url: url }, 202, { Location: url });
    }
    if (mode === "stream") return streamCheck(c, ctx, jobId);
    return inlineCheck(c, ctx, jobId);
  });
}

type Inline = { kind: "done"; result: StoredResult } | { kind: "busy" } | { kind: "timeout" } | { kind: "failed"; error: unknown };

/** Runs item 0 inline within its budget; anything else hands it to the queue. */
async function runInline(c: Context<AppEnv>, ctx: CheckContext, jobId: string, onEvent?: RunOptions["onEvent"]): Promise<Inline> {
  const settings = checkSettings(c.env);
  const deadline = Date.now() + settings.itemBudgetMs;
  const release = await inlineSlots.acquire(settings.capacity, deadline);
  if (!release) return { kind: "busy" };
  const run = runItem(ctx, jobId, 0, { deadline, onEvent }).finally(release);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<Inline>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timeout" }), Math.max(0, deadline - Date.now()));
  });
  const outcome = await Promise.race([
    run.then(
      (result): Inline => ({ kind: "done", result }),
      (error): Inline => (error instanceof BudgetExceeded ? { kind: "timeout" } : { kind: "failed", error }),
    ),
    expired,
  ]);
  if (timer !== undefined) clearTimeout(timer);
  // A run that lost the race stops at its next stage, or stores its result if it was past the last one.
  c.executionCtx.waitUntil(run.then(() => undefined, () => undefined));
  return outcome;
}

async function inlineCheck(c: Context<AppEnv>, ctx: CheckContext, jobId: string) {
  const outcome = await runInline(c, ctx, jobId);
  if (outcome.kind === "done") return c.json(renderResult(outcome.result, new URL(c.req.url).origin), 200);
  if (outcome.kind === "failed") console.error("inline check failed; queued", jobId, outcome.error);
  await enqueueItems(ctx, jobId, [0]);
  // The job exists and goes on: this answer is a committed outcome, replayed for the same key.
  idempotencyOf(c)?.commitOutcome();
  throw continuing(outcome.kind === "timeout" ? "timeout" : "busy", c, jobId);
}

function streamCheck(c: Context<AppEnv>, ctx: CheckContext, jobId: string) {
  const docs = c.env.DOCS_URL;
  const requestId = c.get("requestId");
  const keepAliveMs = checkSettings(c.env).keepAliveMs;
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
        const outcome = await runInline(c, ctx, jobId, async (e) => {
          if (e.type === "quality") await stream.writeSSE({ event: "quality", data: JSON.stringify({ page: e.page, ...e.quality }) });
          else if (e.type === "located") await stream.writeSSE({ event: "located", data: JSON.stringify({ signatures: e.signatures }) });
          else await stream.writeSSE({ event: "comparing", data: JSON.stringify({ reference_count: e.referenceCount }) });
        });
        if (outcome.kind === "done") {
          await stream.writeSSE({ event: "decision", data: JSON.stringify(renderResult(outcome.result, new URL(c.req.url).origin)) });
          return;
        }
        if (outcome.kind === "failed") console.error("streamed check failed; queued", jobId, outcome.error);
        await enqueueItems(ctx, jobId, [0]);
        const problem = continuing(outcome.kind === "timeout" ? "timeout" : "busy", c, jobId);
        await stream.writeSSE({ event: "error", data: JSON.stringify(problemDocument(problem, docs, requestId)) });
      } finally {
        clearInterval(keepAlive);
      }
    },
    async (err, stream) => {
      console.error("check stream failed; queued", jobId, err);
      await enqueueItems(ctx, jobId, [0]).catch(() => undefined);
      const problem = new ProblemError("internal_error", "The stream failed; read the job for its outcome.", {
        extensions: { job_id: jobId, status_url: statusUrl(c, jobId) },
      });
      await stream.writeSSE({ event: "error", data: JSON.stringify(problemDocument(problem, docs, requestId)) });
    },
  );
}
