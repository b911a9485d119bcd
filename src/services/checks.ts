/**
 * Checks as an application service: creating a job (inputs into the inbox, rows into D1, the Job DO),
 * running one item (shared by the inline, streamed and queued paths), and settling an item's outcome so
 * that it counts exactly once: in D1, in the Job DO, in the month's usage and on the subject.
 */
import { jobObject } from "../../durable-objects/job-client";
import type { JobState } from "../../durable-objects/job";
import type { Env } from "../env";
import type { Org, RegionStore } from "../domain/tenancy";
import { ProblemError } from "../http/problem";
import { countUsage } from "../http/billing";
import { checkId, isFinished, type JobMode, type JobSource } from "../domain/job";
import type { NormalisedItem } from "../domain/check-request";
import type { Policy } from "../domain/policy";
import { canonicalJson, hasEnoughReferences, type PolicySpec } from "../domain/policy";
import { isVerifyError } from "../verify/types";
import { checksRepo, type ItemOutcome } from "../storage/checks";
import type { CheckItemRow, CheckJobRow } from "../storage/schema/checks";
import { subjectsRepo } from "../storage/subjects";
import { templatesRepo } from "../storage/templates";
import { rebuildModel } from "./enrolment";
import { staleReferences } from "./feature-upgrade";
import type { CheckEngine, CheckProgress, VerificationEngine } from "./engine";
import { decidedResult, errorResult, storedResultOf, type ItemBasics, type ItemError, type StoredResult } from "./check-results";
import { cropKey, inboxExpired, inboxExpiry, inboxPrefix, inputKey, itemReferenceKey } from "./inbox";
import { NotEnoughReferences } from "./check-engine-live";
import { deletePrefix } from "../storage/files";
import { logError } from "../util/log";
import { webhooksRepo } from "../storage/webhooks";
import { mapLimited } from "../util/map-limited";
import { emitCheckCompleted, emitJobFinished } from "./webhook-emitters";
import { loadTemplate } from "./templates";
import { summariseBucketJob } from "./bucket-drops";

/** Inbox writes of one job creation in flight at once. */
const INBOX_WRITE_CONCURRENCY = 8;

/** One message of the check queue: one item of one job. */
export interface CheckMessage {
  kind: "check_item";
  orgId: string;
  jobId: string;
  index: number;
}

export interface CheckContext {
  env: Env;
  org: Org;
  store: RegionStore;
  engine: VerificationEngine & CheckEngine;
}

export interface PreparedInput {
  bytes: Uint8Array;
  contentType: string | null;
  fileName: string | null;
}

/**
 * A document already in the region's bucket (a bucket drop's file): createJob copies it into the inbox as
 * a stream, so a job of many large files never holds their bytes at once. `etag` is the version that was
 * inspected; a file replaced since fails the copy (and the job's creation) instead of being checked unseen.
 */
export interface BucketInput {
  sourceKey: string;
  etag: string;
  contentType: string | null;
  fileName: string | null;
}

export interface PreparedItem {
  item: NormalisedItem;
  input: PreparedInput | BucketInput;
  pages: number;
  references: PreparedInput[];
}

/** What is stored with each item: the normalised request item and where its references are. */
export interface ItemSpec extends NormalisedItem {
  referenceKeys: string[];
  referenceLabels: string[];
  /**
   * The model key of the template the item named, as it was when the item was submitted (null: it was
   * gone by then). Each creation of a template stores its model under a key of its own, so a template
   * deleted and created again under the same id has another: the item must not run with its boxes.
   * Absent on items that name no template and on items stored before it was recorded.
   */
  templateVersion?: string | null;
}

/** Thrown from a stage boundary when the item's inline budget has run out; the queue finishes it. */
export class BudgetExceeded extends Error {
  constructor() {
    super("the item's budget ran out");
    this.name = "BudgetExceeded";
  }
}

function isConstraintError(err: unknown): boolean {
  return /UNIQUE|PRIMARY KEY|constraint/i.test(String((err as Error)?.message ?? err));
}

/**
 * Creates a job: its rows (job and items) in D1, its inputs in the inbox, and its Job DO. A job id
 * that exists already is a 409 conflict. Nothing is left behind when the inputs cannot be stored.
 */
export async function createJob(
  ctx: CheckContext,
  args: {
    jobId: string;
    mode: JobMode;
    policy: Policy;
    metadata: Record<string, unknown> | null;
    actor: string;
    items: PreparedItem[];
    source?: JobSource;
  },
): Promise<CheckJobRow> {
  const now = new Date();
  const nowIso = now.toISOString();
  const orgId = ctx.org.id;
  const files: { key: string; doc: PreparedInput | BucketInput; contentType: string }[] = [];
  // A document named by several items or references (one PreparedInput) is stored once, under the key
  // of its first use: the inbox holds each upload once, and the queue's reference cache (modelFor) finds
  // the features of a shared reference under one key.
  const stored = new Map<PreparedInput | BucketInput, string>();
  const store = (doc: PreparedInput | BucketInput, key: string): string => {
    const known = stored.get(doc);
    if (known) return known;
    stored.set(doc, key);
    files.push({ key, doc, contentType: doc.contentType ?? "application/octet-stream" });
    return key;
  };
  const templateVersions = new Map<string, string | null>();
  for (const id of new Set(args.items.map((p) => p.item.templateId).filter((t): t is string => !!t))) {
    templateVersions.set(id, (await templatesRepo(ctx.store.db).get(orgId, id))?.modelKey ?? null);
  }
  const itemRows: CheckItemRow[] = args.items.map((p) => {
    const key = store(p.input, inputKey(orgId, args.jobId, p.item.index));
    const referenceKeys = p.references.map((r, n) => store(r, itemReferenceKey(orgId, args.jobId, p.item.index, n)));
    const referenceLabels = p.item.references.map((s, n) => ("part" in s ? s.part : `references[${n}]`));
    const spec: ItemSpec = {
      ...p.item,
      referenceKeys,
      referenceLabels,
      ...(p.item.templateId ? { templateVersion: templateVersions.get(p.item.templateId) ?? null } : {}),
    };
    return {
      orgId,
      jobId: args.jobId,
      itemIndex: p.item.index,
      state: "pending",
      subjectReference: p.item.subjectReference,
      reference: p.item.reference,
      process: p.item.process,
      inputType: p.item.inputType,
      fileName: p.item.fileName ?? p.input.fileName,
      spec: JSON.stringify(spec),
      inputKey: key,
      pageCount: p.pages,
      decision: null,
      score: null,
      billable: 0,
      result: null,
      createdAt: nowIso,
      completedAt: null,
    };
  });
  const job: CheckJobRow = {
    orgId,
    jobId: args.jobId,
    status: "queued",
    source: args.source ?? "api",
    mode: args.mode,
    policy: `${args.policy.name}@${args.policy.version}`,
    policySpec: canonicalJson(args.policy.spec),
    itemCount: itemRows.length,
    completedItems: 0,
    metadata: args.metadata ? JSON.stringify(args.metadata) : null,
    createdBy: args.actor,
    createdAt: nowIso,
    updatedAt: nowIso,
    completedAt: null,
    inboxExpiresAt: inboxExpiry(now, ctx.org.inboxTtlSeconds),
    inboxSweptAt: null,
  };

  const repo = checksRepo(ctx.store.db);
  try {
    await repo.insertJob(job, itemRows);
  } catch (err) {
    if (!isConstraintError(err)) throw err;
    throw new ProblemError(
      "conflict",
      `A job with job_id ${args.jobId} exists already; choose another job_id or read it with GET /sig/checks/${args.jobId}.`,
      {
        extensions: { job_id: args.jobId },
      },
    );
  }
  try {
    // Several writes in flight: a 100-item job's inputs are 100 objects, each a round trip to R2.
    await mapLimited(files, INBOX_WRITE_CONCURRENCY, async (f) => {
      if ("bytes" in f.doc) return ctx.store.files.put(f.key, f.doc.bytes, { httpMetadata: { contentType: f.contentType } });
      const src = await ctx.store.files.get(f.doc.sourceKey, { onlyIf: { etagMatches: f.doc.etag } });
      if (!src || !("body" in src)) throw new Error(`${f.doc.sourceKey} was replaced or deleted after it was inspected`);
      // put() takes a stream only of known length; an object body is not always taken as one.
      const copy = new FixedLengthStream(src.size);
      const [put] = await Promise.all([
        ctx.store.files.put(f.key, copy.readable, { httpMetadata: { contentType: f.contentType } }),
        src.body.pipeTo(copy.writable),
      ]);
      return put;
    });
    await jobObject(ctx.env, orgId, args.jobId).init(orgId, args.jobId, itemRows.length);
  } catch (err) {
    logError("check inputs could not be stored", err, { job_id: args.jobId });
    await discardJob(ctx, args.jobId);
    throw new ProblemError("unavailable", "The check's inputs could not be stored; nothing was kept. Retry the request.", {
      headers: { "Retry-After": "5" },
    });
  }
  return job;
}

/** Undoes a job's creation: its rows, its inbox and its Job DO. Best effort; each part may be absent. */
export async function discardJob(ctx: Pick<CheckContext, "env" | "org" | "store">, jobId: string): Promise<void> {
  await deletePrefix(ctx.store.files, inboxPrefix(ctx.org.id, jobId)).catch(() => 0);
  await checksRepo(ctx.store.db)
    .deleteJob(ctx.org.id, jobId)
    .catch(() => undefined);
  await jobObject(ctx.env, ctx.org.id, jobId)
    .discard()
    .catch(() => undefined);
}

/** Hands items to the check queue. */
export async function enqueueItems(ctx: Pick<CheckContext, "env" | "org">, jobId: string, indexes: number[]): Promise<void> {
  const messages = indexes.map((index) => ({ body: { kind: "check_item", orgId: ctx.org.id, jobId, index } satisfies CheckMessage }));
  for (let i = 0; i < messages.length; i += 100) await ctx.env.CHECK_QUEUE.sendBatch(messages.slice(i, i + 100));
}

export interface RunOptions {
  /** Epoch ms after which the item is abandoned at the next stage (inline checks only). */
  deadline?: number;
  onEvent?: (e: CheckProgress) => void | Promise<void>;
  /**
   * Reference models already loaded for the items run together (a queue batch): items of one subject
   * (or one set of per-item references) load its model once. Kept for one batch only, so a model
   * changed since is seen by the next batch.
   */
  models?: Map<string, Promise<ReferenceModelOrError>>;
  /**
   * Render and store the crops of the located signatures now (default true: an inline caller may fetch
   * them at once). A queued item leaves them to their first read, which renders and keeps them
   * (services/check-crops.ts): most queued items' crops are never looked at, and rendering one costs
   * about as much CPU as a third of the item's check.
   */
  renderCrops?: boolean;
}

type ReferenceModelOrError = { model: unknown; count: number } | ItemError;

/**
 * Runs one item to its stored outcome and settles it. An item stored before (a redelivery, or an
 * inline run that finished after its request gave up) is not computed again, only settled again,
 * which changes nothing that was already counted.
 */
export async function runItem(ctx: CheckContext, jobId: string, index: number, opts: RunOptions = {}): Promise<StoredResult> {
  const repo = checksRepo(ctx.store.db);
  const [job, item] = await Promise.all([repo.job(ctx.org.id, jobId), repo.item(ctx.org.id, jobId, index)]);
  if (!job || !item) throw new Error(`check item ${jobId}/${index} does not exist`);
  const done = storedResultOf(item);
  if (item.state === "done" && done) {
    await settle(ctx, job, done);
    return done;
  }
  const started = await jobObject(ctx.env, ctx.org.id, jobId).start();
  if (started) await repo.mirrorProgress(ctx.org.id, jobId, started);

  const result = await evaluate(ctx, job, item, opts);
  const stored = await repo.finishItem(ctx.org.id, jobId, index, itemOutcome(result, item));
  // Another delivery stored its outcome first: that one stands.
  const final = stored ? result : (storedResultOf((await repo.item(ctx.org.id, jobId, index))!) ?? result);
  await settle(ctx, job, final);
  return final;
}

/** An item whose queue messages ran out of retries gets an error outcome, so its job can finish. */
export async function giveUpItem(ctx: CheckContext, jobId: string, index: number): Promise<void> {
  const repo = checksRepo(ctx.store.db);
  const [job, item] = await Promise.all([repo.job(ctx.org.id, jobId), repo.item(ctx.org.id, jobId, index)]);
  if (!job || !item) return;
  if (item.state !== "done") {
    const result = errorResult(basicsOf(job, item, specOf(item)), {
      code: "processing_failed",
      detail: "The item could not be checked after repeated attempts; submit it again.",
    });
    await repo.finishItem(ctx.org.id, jobId, index, {
      decision: null,
      score: null,
      billable: false,
      result: JSON.stringify(result),
      completedAt: result.completed_at,
      pageCount: item.pageCount,
    });
  }
  const final = storedResultOf((await repo.item(ctx.org.id, jobId, index))!);
  if (final) await settle(ctx, job, final);
}

export function specOf(item: CheckItemRow): ItemSpec {
  return JSON.parse(item.spec) as ItemSpec;
}

/**
 * What an item's result is built from. Its metadata is the item's own, else the request's (the job's):
 * the item's replaces the request's whole, as a manifest's `defaults` do, never merged member by member.
 */
function basicsOf(job: CheckJobRow, item: CheckItemRow, spec: ItemSpec): ItemBasics {
  return {
    jobId: job.jobId,
    index: item.itemIndex,
    subjectReference: item.subjectReference,
    reference: item.reference,
    process: item.process,
    inputType: item.inputType,
    fileName: item.fileName,
    metadata: spec.metadata ?? (job.metadata ? (JSON.parse(job.metadata) as Record<string, unknown>) : null),
    policy: job.policy,
    createdAt: item.createdAt,
  };
}

/** Counts an item's stored outcome everywhere it counts. Every step is idempotent. */
function settle(ctx: CheckContext, job: CheckJobRow, result: StoredResult): Promise<void> {
  return settleResults(ctx, job, [result]);
}

/**
 * Counts stored outcomes of one job everywhere they count, for a whole queue batch at once: one Job DO
 * call, one usage call, one progress mirror and one endpoint read for all of them, where one item
 * alone would pay each. Every step is idempotent, so a redelivered batch (or a part of it) changes
 * nothing that was counted, and the job finishes exactly once (the Job DO decides).
 */
export async function settleResults(ctx: CheckContext, job: CheckJobRow, results: StoredResult[]): Promise<void> {
  if (results.length === 0) return;
  const repo = checksRepo(ctx.store.db);
  const completion = await jobObject(ctx.env, ctx.org.id, job.jobId).completeItems(
    results.map((r) => ({ index: r.item_index, ok: r.decision !== null })),
  );
  await countUsage(
    ctx.env,
    ctx.org,
    results.map((r) => checkId(job.jobId, r.item_index)),
  );
  const finished = completion !== null && isFinished(completion.state.status);
  if (completion) await repo.mirrorProgress(ctx.org.id, job.jobId, completion.state);
  // A bucket drop's job writes its summary.json once finished (every delivery after that finds it written).
  if (job.source === "bucket" && finished) await summariseBucketJob(ctx, job.jobId);
  // Each subject's last check: the newest of the batch is enough (recordLastCheck never goes back in time).
  const lastBySubject = new Map<string, StoredResult>();
  for (const r of results) {
    if (!r.subject_reference) continue;
    const known = lastBySubject.get(r.subject_reference);
    if (!known || known.completed_at <= r.completed_at) lastBySubject.set(r.subject_reference, r);
  }
  await Promise.all(
    [...lastBySubject.values()].map((r) =>
      repo.recordLastCheck(ctx.org.id, r.subject_reference!, { id: r.check_id, decision: r.decision, at: r.completed_at }),
    ),
  );
  // Webhooks: each item's outcome, and the job's once it has finished. Emitted on every settle (a
  // redelivery emits the same event ids again, which no endpoint receives twice).
  const enabled = await webhooksRepo(ctx.store.db).enabledEndpoints(ctx.org.id, "sig");
  // Without an enabled endpoint publishing has no effect, so the events need not be built at all.
  if (enabled.length > 0) for (const r of results) await emitCheckCompleted(ctx, r, enabled);
  if (finished) {
    await emitJobFinished(ctx, { ...completion.state, source: job.source, finishedAt: completion.state.finishedAt });
  }
}

/**
 * The features of a per-item reference file, or null when it holds no usable signature. The outcome is
 * kept beside the file in the job's inbox (and swept with it), so a reference shared by many items of a
 * job is decoded once for the job, not once per item (the items may run in different isolates).
 */
async function referenceFeatures(ctx: CheckContext, key: string): Promise<unknown | null | "expired"> {
  const cacheKey = `${key}.features.json`;
  const cached = await ctx.store.files.get(cacheKey);
  if (cached) {
    const entry = (await cached.json()) as { features: unknown | null; featureVersion?: number };
    // An entry another version of the core wrote (a job that spans a deploy) is extracted again.
    const current =
      entry.features !== null ? ctx.engine.featuresCurrent(entry.features) : entry.featureVersion === ctx.engine.featureVersion;
    if (current) return entry.features;
  }
  const obj = await ctx.store.files.get(key);
  if (!obj) return "expired";
  let features: unknown | null = null;
  try {
    const enrolled = await ctx.engine.enrolReference(new Uint8Array(await obj.arrayBuffer()));
    if (enrolled.ok) features = enrolled.features;
  } catch (err) {
    if (!isVerifyError(err)) throw err;
  }
  await ctx.store.files.put(cacheKey, JSON.stringify({ features, featureVersion: ctx.engine.featureVersion }), {
    httpMetadata: { contentType: "application/json" },
  });
  return features;
}

/** A reference model to compare with, or the error that stops the item. */
function modelFor(ctx: CheckContext, spec: ItemSpec, models?: RunOptions["models"]): Promise<ReferenceModelOrError> {
  if (!models) return loadModel(ctx, spec);
  const key = spec.referenceKeys.length > 0 ? `references:${spec.referenceKeys.join("\n")}` : `subject:${spec.subjectReference}`;
  let model = models.get(key);
  if (!model) {
    model = loadModel(ctx, spec);
    models.set(key, model);
    // A failed load is not shared: each item that needs it tries again (and fails or retries alone).
    model.catch(() => models.delete(key));
  }
  return model;
}

async function loadModel(ctx: CheckContext, spec: ItemSpec): Promise<ReferenceModelOrError> {
  if (spec.referenceKeys.length > 0) {
    const refs: { refId: string; features: unknown }[] = [];
    for (const [n, key] of spec.referenceKeys.entries()) {
      const features = await referenceFeatures(ctx, key);
      if (features === "expired") return { code: "input_expired", detail: "The item's references have expired from the job's inbox." };
      if (features !== null) refs.push({ refId: spec.referenceLabels[n], features });
    }
    if (refs.length === 0) return { code: "no_references", detail: "None of the item's references holds a usable signature." };
    return { model: (await ctx.engine.buildModel(refs)).model, count: refs.length };
  }
  const subjectReference = spec.subjectReference!;
  const repo = subjectsRepo(ctx.store.db);
  const read = async () => {
    for (let attempt = 1; ; attempt++) {
      const subject = await repo.get(ctx.org.id, subjectReference);
      if (!subject) return null;
      const [refs, obj] = await Promise.all([
        repo.references(ctx.org.id, subjectReference),
        subject.modelKey ? ctx.store.files.get(subject.modelKey) : null,
      ]);
      // A model named by the row but gone from R2 was replaced meanwhile (a concurrent rebuild stores its
      // own and deletes the previous one): read the row again rather than report no references.
      if (subject.modelKey && !obj && attempt < 3) continue;
      const stored = obj ? ((await obj.json()) as { model: unknown }) : null;
      return { subject, live: refs.filter((r) => r.status === "enrolled"), model: stored?.model ?? null };
    }
  };
  let state = await read();
  if (!state) return { code: "subject_not_found", detail: `The subject ${subjectReference} does not exist; enrol references first.` };
  // Never compare with a stale model: a change to the references was committed but its model never
  // stored, or the core's features changed since the references (or the model) were stored. The rebuild
  // extracts outdated references again from their files (services/feature-upgrade.ts): the first check
  // of a subject after a feature change pays for it once.
  if (
    state.subject.modelRevision !== state.subject.refsRevision ||
    staleReferences(ctx.engine, state.live).length > 0 ||
    (state.model !== null && !ctx.engine.modelCurrent(state.model))
  ) {
    await rebuildModel({ store: ctx.store, engine: ctx.engine }, ctx.org.id, subjectReference);
    state = (await read()) ?? state;
  }
  if (state.model === null || state.live.length === 0)
    return { code: "no_references", detail: `The subject ${subjectReference} has no enrolled reference.` };
  return { model: state.model, count: state.live.length };
}

/** The row an evaluated item is stored as (storage/checks finishItem and finishItems). */
export function itemOutcome(result: StoredResult, item: Pick<CheckItemRow, "pageCount">): ItemOutcome {
  return {
    decision: result.decision,
    score: result.score,
    billable: result.billable,
    result: JSON.stringify(result),
    completedAt: result.completed_at,
    pageCount: result.pages ?? item.pageCount,
  };
}

/** The item's outcome: a decision, or an error. Only unexpected failures (and BudgetExceeded) throw. */
export async function evaluate(ctx: CheckContext, job: CheckJobRow, item: CheckItemRow, opts: RunOptions): Promise<StoredResult> {
  const spec = specOf(item);
  const basics = basicsOf(job, item, spec);
  const checkpoint = () => {
    if (opts.deadline !== undefined && Date.now() > opts.deadline) throw new BudgetExceeded();
  };
  if (inboxExpired(job))
    return errorResult(basics, { code: "input_expired", detail: "The item's input has expired from the job's inbox." });
  const obj = await ctx.store.files.get(item.inputKey);
  if (!obj) return errorResult(basics, { code: "input_expired", detail: "The item's input has expired from the job's inbox." });
  const bytes = new Uint8Array(await obj.arrayBuffer());

  const policySpec = JSON.parse(job.policySpec) as PolicySpec;
  const model = await modelFor(ctx, spec, opts.models);
  checkpoint();
  if ("code" in model) return errorResult(basics, model, item.pageCount);
  if (!hasEnoughReferences(policySpec, model.count)) {
    return errorResult(
      basics,
      {
        code: "not_enough_references",
        detail: `The policy ${job.policy} needs ${policySpec.min_references} references; ${model.count} are usable.`,
      },
      item.pageCount,
    );
  }
  const template = spec.templateId ? await loadTemplate(ctx.store, ctx.org.id, spec.templateId, spec.templateVersion) : null;
  if (spec.templateId && !template) {
    return errorResult(
      basics,
      {
        code: "template_not_found",
        detail: `The template ${spec.templateId} was deleted, or replaced, after the check was submitted; submit it again.`,
      },
      item.pageCount,
    );
  }
  try {
    const doc = await ctx.engine.checkDocument(
      bytes,
      model.model,
      { thresholds: policySpec.thresholds, quality_floor: policySpec.quality_floor },
      { inputType: spec.inputType, target: spec.target, templatePages: template?.models ?? null, renderCrops: opts.renderCrops ?? true },
      async (e) => {
        checkpoint();
        await opts.onEvent?.(e.type === "comparing" ? { ...e, referenceCount: e.referenceCount || model.count } : e);
        checkpoint();
      },
    );
    // The crops are kept beside the input, so they expire with the inbox.
    for (const [n, png] of (doc.cropPngs ?? []).entries()) {
      const sig = doc.signatures[n];
      if (sig)
        await ctx.store.files.put(cropKey(ctx.org.id, job.jobId, item.itemIndex, sig.index), png, {
          httpMetadata: { contentType: "image/png" },
        });
    }
    return decidedResult(basics, doc, model.count, template ? { templateId: template.templateId, names: template.names } : undefined);
  } catch (err) {
    if (isVerifyError(err)) return errorResult(basics, { code: err.code, detail: err.message }, item.pageCount);
    if (err instanceof NotEnoughReferences) return errorResult(basics, { code: err.code, detail: err.message }, item.pageCount);
    throw err;
  }
}

export type { JobState };
