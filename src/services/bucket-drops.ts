/**
 * Bucket drops: an upload event (from R2 event notifications, or the local S3 endpoint, same message)
 * becomes a check job with source `bucket`, and when the job ends a summary.json is written beside the
 * drop. Layout and manifest: src/domain/drop.ts and docs/bucket-drops.md.
 *
 * Exactly once: the drop's id is derived from its event (object key, eTag, eventTime), so a redelivered
 * event finds its bucket_drops row. The job id is reserved on that row (unique per organisation), with the
 * plan, before the job is made, so a crash between steps is finished by the redelivery rather than done
 * twice (the job under its own reservation is the drop's, taken up with that plan), and no two drops
 * ever share a job.
 * Several deliveries may want to submit one drop at once (the manifest's event and the last file's, a
 * redelivery, the end of the wait): only the one holding the drop's lock does; the others do nothing.
 */
import { emitBucketDropCompleted } from "./webhook-emitters";
import type { RegionStore } from "../domain/tenancy";
import { bucketNames } from "../s3/config";
import { logError, logWarn } from "../util/log";
import { configOf } from "../config";
import type { Env } from "../env";
import type { Org } from "../domain/tenancy";
import { isProblemError } from "../http/problem";
import { assertBilling, assertQuota } from "../http/billing";
import { DEFAULT_POLICY_NAME } from "../domain/policy";
import {
  MANIFEST_NAME,
  MAX_MANIFEST_BYTES,
  SUMMARY_NAME,
  SUMMARY_SUFFIX,
  manifestItems,
  parseManifest,
  readDropKey,
  type DropKey,
  type ManifestItemValue,
} from "../domain/drop";
import { MAX_DOCUMENT_BYTES, type NormalisedItem } from "../domain/check-request";
import { checkId, isFinished } from "../domain/job";
import { jobObject } from "../../durable-objects/job-client";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { getLatestPolicy } from "../storage/policies";
import { templatesRepo } from "../storage/templates";
import { checksRepo } from "../storage/checks";
import { dropsRepo, type DropRecord } from "../storage/drops";
import { isVerifyError } from "../verify/types";
import type { R2EventMessage } from "../s3/events";
import { regionOfBucket } from "../s3/config";
import { createJob, discardJob, enqueueItems, giveUpItem, type CheckContext, type PreparedItem } from "./checks";
import { liveCheckEngine } from "./check-engine-live";
import { storedResultOf, type ItemError } from "./check-results";

/** The delayed message that ends a batch's wait for the files its manifest names. */
export interface DropDeadlineMessage {
  kind: "drop_deadline";
  orgId: string;
  dropId: string;
}

/** What a drop decided before its job ran: each manifest item's job item, or the errors that kept it out. */
interface DropPlan {
  manifest: string;
  policy: string | null;
  error: ItemError | null;
  entries: PlanEntry[];
}

interface PlanEntry {
  file: string;
  key: string;
  item_index: number | null;
  subject_reference: string | null;
  reference: string | null;
  template_id: string | null;
  errors: ItemError[];
}

const ACTOR = "bucket_drop";

/**
 * How long a delivery holds a drop's lock: a queue consumer's longest run (15 minutes of wall time), so a
 * live holder is never overtaken, and a holder that died without releasing it is overtaken after that.
 */
const LOCK_SECONDS = 15 * 60;

function waitSeconds(env: Env): number {
  return configOf(env).drops.waitSeconds;
}

function waitOver(drop: DropRecord): boolean {
  return !drop.waitUntil || Date.parse(drop.waitUntil) <= Date.now();
}

async function shortHash(s: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
  return [...d.subarray(0, 10)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

interface DropContext {
  env: Env;
  org: Org;
  ctx: CheckContext;
  /** The organisation, or the one above it, whose suspension refuses the drop; null when none is suspended. */
  suspendedBy: Org | null;
}

async function dropContext(env: Env, orgId: string): Promise<DropContext | "gone" | "moving"> {
  // With its ancestors: a suspended parent suspends the organisation too, as the API treats it.
  const chain = await directory(env.DIRECTORY).orgWithAncestors(orgId);
  const org = chain[0];
  if (!org) return "gone";
  if (org.movingTo) return "moving";
  const store = regionStore(env, org.region);
  return { env, org, ctx: { env, org, store, engine: liveCheckEngine() }, suspendedBy: chain.find((o) => o.suspended) ?? null };
}

export class RetryLater extends Error {
  constructor(readonly delaySeconds: number) {
    super("retry later");
  }
}

function createsObject(msg: R2EventMessage): boolean {
  return msg.action === "PutObject" || msg.action === "CompleteMultipartUpload" || msg.action === "CopyObject";
}

/**
 * One upload event, delivered as the queue message `delivery` (its id, the same at every retry). Throws
 * RetryLater (or anything) to have the message retried.
 */
export async function handleObjectEvent(env: Env, msg: R2EventMessage, delivery: string): Promise<void> {
  if (!createsObject(msg)) return;
  const where = readDropKey(msg.object.key);
  if (!where || where.kind === "output") return;
  const dc = await dropContext(env, where.orgId);
  if (dc === "gone") return;
  if (dc === "moving") throw new RetryLater(30);
  // The event must come from the organisation's own regional bucket (an event from the bucket of a region
  // the organisation has left names objects this region does not hold).
  if (regionOfBucket(env, msg.bucket) !== dc.org.region) {
    logWarn("bucket event from another region's bucket ignored", { bucket: msg.bucket, key: msg.object.key });
    return;
  }
  const store = dc.ctx.store;
  const repo = dropsRepo(store.db);

  if (where.kind === "batch_file") {
    // A retry of this event finishes first what its earlier delivery submitted but did not finish.
    for (const d of await repo.submittedBy(dc.org.id, where.folder, delivery)) await finishSubmitted(dc, d);
    // A late file is crossed off the missing list of each batch waiting in its folder, without reading
    // the bucket: a batch of n files costs n such updates, not n manifest reads and n * n HEADs. The
    // delivery that empties the list submits the batch (as does any once the wait is over).
    for (const d of await repo.waitingIn(dc.org.id, where.folder)) {
      const missing = await repo.arrived(dc.org.id, d.dropId, [where.name]);
      // No list yet: the manifest's own event has not read it, and looks for this file when it does.
      if (missing === null) continue;
      if (missing.length === 0 || waitOver(d)) await advanceDrop(dc, d, delivery, missing.length > 0);
    }
    return;
  }
  const drop = await claimDrop(dc, msg, where);
  const dropId = drop.dropId;
  if (drop.state === "submitted") {
    await finishSubmitted(dc, drop);
    return;
  }
  if (drop.state !== "waiting") return;
  if (where.kind === "unsupported") {
    const error = { code: "unsupported_location", detail: `${msg.object.key}: ${where.reason}.` };
    await underLock(dc, drop, delivery, () => finishWithoutJob(dc, drop, error, [], delivery));
    return;
  }
  if ((await advanceDrop(dc, drop, delivery, false)) !== "done" && where.kind === "manifest") {
    // Files still on their way: look again when the wait ends (each file's own event looks sooner). Also
    // when another delivery holds the lock (the last file's event, say): should it fail every retry, this
    // message still ends the drop.
    await env.BUCKET_EVENTS_QUEUE.send({ kind: "drop_deadline", orgId: dc.org.id, dropId } satisfies DropDeadlineMessage, {
      delaySeconds: Math.min(43200, waitSeconds(env)),
    });
  }
}

/** The drop an event starts: recorded at its first delivery, found again at every later one. */
async function claimDrop(
  dc: DropContext,
  msg: R2EventMessage,
  where: Extract<DropKey, { kind: "manifest" | "single" | "unsupported" }>,
): Promise<DropRecord> {
  const repo = dropsRepo(dc.ctx.store.db);
  const dropId = `drop_${await shortHash(`${msg.object.key}\n${msg.object.eTag ?? ""}\n${msg.eventTime}`)}`;
  const summaryKey = where.kind === "manifest" ? `${where.folder}${SUMMARY_NAME}` : `${msg.object.key}${SUMMARY_SUFFIX}`;
  const folder = where.kind === "unsupported" ? msg.object.key.slice(0, msg.object.key.lastIndexOf("/") + 1) : where.folder;
  const waitUntil = new Date(Date.now() + waitSeconds(dc.env) * 1000).toISOString();
  await repo.claim({ orgId: dc.org.id, dropId, objectKey: msg.object.key, folder, summaryKey, state: "waiting", jobId: null, waitUntil });
  return (await repo.get(dc.org.id, dropId))!;
}

/**
 * A bucket-events message that ran out of retries (dispatch.ts, dead-letter queue): its drop, if it made
 * no job and has no summary yet, ends with a failed summary.json instead of waiting forever. A batch
 * file's event sends the drops of its folder it would have submitted (none missing, or their wait over)
 * a deadline message at once, rather than failing a drop another delivery may still be retrying (as do
 * the folder's submitted drops whose items are not all queued). A submitted drop, or a waiting one whose
 * job was made, is finished from here (finishFromDeadLetter): its job never stays queued.
 */
export async function deadLetteredDrop(env: Env, msg: R2EventMessage | DropDeadlineMessage, delivery: string): Promise<void> {
  let orgId: string;
  let event: { msg: R2EventMessage; where: Extract<DropKey, { kind: "manifest" | "single" | "unsupported" }> } | null = null;
  let batchFolder: string | null = null;
  if ("kind" in msg) orgId = msg.orgId;
  else {
    if (!createsObject(msg)) return;
    const where = readDropKey(msg.object.key);
    if (!where || where.kind === "output") return;
    orgId = where.orgId;
    if (where.kind === "batch_file") batchFolder = where.folder;
    else event = { msg, where };
  }
  const dc = await dropContext(env, orgId);
  if (dc === "gone") return;
  if (dc === "moving") {
    // Its region's storage is being copied: nothing can be written for the drop now.
    logError("dead-lettered bucket event of an organisation still moving; its drop stays unfinished", undefined, { org_id: orgId });
    return;
  }
  if (!("kind" in msg) && regionOfBucket(env, msg.bucket) !== dc.org.region) return;
  const repo = dropsRepo(dc.ctx.store.db);
  if (batchFolder !== null) {
    // Not failed from here: another delivery of the drop may still be retrying it. Every waiting drop has
    // a deadline message, whose own dead letter ends it; the drops this event would have submitted are
    // looked at again at once instead.
    // So are the drops of the folder submitted and not finished (this event may have submitted one).
    const due = [...(await repo.dueIn(orgId, batchFolder, new Date().toISOString())), ...(await repo.unfinishedIn(orgId, batchFolder))];
    for (const drop of due) {
      await env.BUCKET_EVENTS_QUEUE.send({ kind: "drop_deadline", orgId, dropId: drop.dropId } satisfies DropDeadlineMessage, {
        delaySeconds: 1,
      });
    }
    return;
  }
  // The drop may never have been recorded (its first delivery failed before that): record it now.
  const drop = event ? await claimDrop(dc, event.msg, event.where) : await repo.get(orgId, (msg as DropDeadlineMessage).dropId);
  if (drop?.state === "submitted") await finishFromDeadLetter(dc, drop, true);
  if (drop?.state !== "waiting") return;
  await failDrop(dc, drop, delivery);
}

/**
 * A submitted drop whose messages ran out of retries before its items were queued: they are queued now
 * (the job and its inputs are whole; nothing the customer sent is lost). Should that fail as well (or
 * `canQueue` is false: the job was cut off while being made, its inputs perhaps not all stored), each item
 * not done yet ends as `processing_failed` through the items' own path, so the job finishes (exactly once,
 * its Job DO decides) and its summary.json is written. A no-op once the drop is finished.
 */
async function finishFromDeadLetter(dc: DropContext, drop: DropRecord, canQueue: boolean): Promise<void> {
  if (drop.state !== "submitted" || !drop.jobId || !drop.plan || drop.lockOwner === null) return;
  if (canQueue) {
    try {
      await finishSubmitted(dc, drop);
      return;
    } catch (err) {
      // A refused drop is only rejected and summarised: nothing else to end; its dead letter is retried.
      if ((JSON.parse(drop.plan) as DropPlan).error) throw err;
      logError("dead-lettered bucket drop's items could not be queued; ending them", err, { org_id: dc.org.id, job_id: drop.jobId });
    }
  }
  const job = jobObject(dc.env, dc.org.id, drop.jobId);
  const state = await job.state();
  if (!state) throw new Error(`bucket drop ${drop.dropId}: job ${drop.jobId} has no Job DO`);
  const done = new Set(await job.completedItems());
  for (let index = 0; index < state.itemCount; index++) if (!done.has(index)) await giveUpItem(dc.ctx, drop.jobId, index);
  await dropsRepo(dc.ctx.store.db).submissionFinished(dc.org.id, drop.dropId);
}

/** Ends a waiting drop whose message ran out of retries with a failed summary.json. */
async function failDrop(dc: DropContext, drop: DropRecord, delivery: string): Promise<void> {
  const again = readDropKey(drop.objectKey)?.kind === "manifest" ? `upload ${MANIFEST_NAME} again` : "upload the file again";
  const error = {
    code: "processing_failed",
    detail: `The drop could not be processed after repeated attempts; nothing was checked. To retry, ${again}.`,
  };
  const end = async () => {
    const made = await madeJob(dc, drop.dropId);
    if (!made) return finishWithoutJob(dc, drop, error, [], delivery, "failed");
    // A job an earlier delivery made (or was cut off making) is never left queued: it is taken up,
    // its Job DO initialised if it was not (init is idempotent), and finished from here.
    if (!made.initialised) await jobObject(dc.env, dc.org.id, made.jobId).init(dc.org.id, made.jobId, made.itemCount);
    const set = { jobId: made.jobId, plan: JSON.stringify(made.plan) };
    if (await dropsRepo(dc.ctx.store.db).advance(dc.org.id, drop.dropId, "waiting", "submitted", set, delivery))
      // A refused drop's job is only rejected, never run: its inputs are not needed.
      await finishFromDeadLetter(dc, { ...drop, ...set, state: "submitted", lockOwner: delivery }, made.initialised || !!made.plan.error);
  };
  // Another delivery submitting the drop right now finishes it; should it die, the drop's wait ends later.
  if ((await underLock(dc, drop, delivery, end)) === "busy") await lookAgainLater(dc, drop.dropId);
}

/** The wait of a batch is over: submit what is there, the missing files as item errors. */
export async function handleDropDeadline(env: Env, msg: DropDeadlineMessage, delivery: string): Promise<void> {
  const dc = await dropContext(env, msg.orgId);
  if (dc === "gone") return;
  if (dc === "moving") throw new RetryLater(30);
  const drop = await dropsRepo(dc.ctx.store.db).get(dc.org.id, msg.dropId);
  if (drop?.state === "submitted") await finishSubmitted(dc, drop);
  if (drop?.state !== "waiting") return;
  // Another delivery is submitting the drop: look again once its lock is over, in case it died.
  if ((await advanceDrop(dc, drop, delivery, true)) === "busy") await lookAgainLater(dc, drop.dropId);
}

/** Ends a drop's wait again once the lock another delivery holds on it is over (a no-op if it finished the drop). */
async function lookAgainLater(dc: DropContext, dropId: string): Promise<void> {
  const drop = await dropsRepo(dc.ctx.store.db).get(dc.org.id, dropId);
  if (drop?.state !== "waiting") return;
  const left = drop.lockUntil ? Math.ceil((Date.parse(drop.lockUntil) - Date.now()) / 1000) : 0;
  await dc.env.BUCKET_EVENTS_QUEUE.send({ kind: "drop_deadline", orgId: dc.org.id, dropId } satisfies DropDeadlineMessage, {
    delaySeconds: Math.min(43200, Math.max(1, left + 1)),
  });
}

/**
 * Runs `work` (which submits or ends the drop) while `delivery` holds the drop's lock, so no other
 * delivery does it at the same time; "busy" when another live delivery holds it (that one goes on, and
 * this one has nothing to do). Should `work` fail, the lock is given up for the retry.
 */
async function underLock<T>(dc: DropContext, drop: DropRecord, delivery: string, work: () => Promise<T>): Promise<T | "busy"> {
  const repo = dropsRepo(dc.ctx.store.db);
  if (!(await repo.lock(dc.org.id, drop.dropId, delivery, LOCK_SECONDS))) return "busy";
  try {
    return await work();
  } finally {
    // A no-op once `work` moved the drop on (which ends the lock).
    await repo.unlock(dc.org.id, drop.dropId, delivery).catch(() => undefined);
  }
}

/** The items of a drop: a manifest's, or the single file's. */
async function itemsOf(
  dc: DropContext,
  drop: DropRecord,
  where: DropKey,
): Promise<{ items: ManifestItemValue[]; policy?: string; jobId?: string; metadata?: Record<string, unknown> } | ItemError> {
  if (where.kind === "single") return { items: [{ file: where.name, subject_reference: where.subjectReference }] };
  const obj = await dc.ctx.store.files.get(drop.objectKey);
  if (!obj) return { code: "manifest_missing", detail: `${drop.objectKey} was deleted before it was read.` };
  if (obj.size > MAX_MANIFEST_BYTES)
    return { code: "manifest_invalid", detail: `${MANIFEST_NAME}: is larger than ${MAX_MANIFEST_BYTES} bytes.` };
  const parsed = parseManifest(await obj.text());
  if ("field" in parsed) return { code: "manifest_invalid", detail: `${MANIFEST_NAME}: ${parsed.field} ${parsed.message}.` };
  const m = parsed.manifest;
  return { items: manifestItems(m), policy: m.policy, jobId: m.job_id, metadata: m.metadata };
}

type DropItems = Exclude<Awaited<ReturnType<typeof itemsOf>>, ItemError>;

/**
 * A waiting drop's next step: a batch looks for its files; once none is missing (or `force`, when the
 * wait is over) the drop is submitted, or refused, by the delivery holding its lock. "waiting" while
 * files are missing and the drop may still wait; "busy" when another delivery holds the lock.
 */
async function advanceDrop(dc: DropContext, drop: DropRecord, delivery: string, force: boolean): Promise<"done" | "waiting" | "busy"> {
  const where = readDropKey(drop.objectKey)!;
  const got = await itemsOf(dc, drop, where);
  let waitEnded = force;
  if (!("code" in got) && where.kind === "manifest" && !force) {
    const missing = await lookForFiles(dc, drop, got.items);
    if (missing === null) return "done";
    if (missing.length > 0 && !waitOver(drop)) return "waiting";
    waitEnded = missing.length > 0;
  }
  return underLock(dc, drop, delivery, async () => {
    // An earlier delivery made the job and died before recording the drop submitted: the job is taken
    // up with the plan it was made from, whatever the manifest or its files are now (a file deleted
    // since is in the job's inbox already), never planned again against items it does not have.
    const made = await madeJob(dc, drop.dropId);
    if (made?.initialised) await markSubmitted(dc, drop, made.jobId, made.plan, delivery);
    else {
      if (made) await discardHalfMade(dc, made.jobId);
      if ("code" in got) await finishWithoutJob(dc, drop, got, [], delivery);
      else await submit(dc, drop, got, delivery, waitEnded);
    }
    return "done" as const;
  });
}

/**
 * The job a waiting drop's earlier delivery made under the job id it reserved (with the plan it recorded
 * then), or null when there is none. `initialised`: its Job DO exists, which createJob makes last, once
 * every input is stored; a job without one was cut off while being made, and nothing of it ran.
 */
async function madeJob(
  dc: DropContext,
  dropId: string,
): Promise<{ jobId: string; plan: DropPlan; itemCount: number; initialised: boolean } | null> {
  const row = await dropsRepo(dc.ctx.store.db).get(dc.org.id, dropId);
  if (row?.state !== "waiting" || !row.intendedJobId || !row.plan) return null;
  const job = await checksRepo(dc.ctx.store.db).job(dc.org.id, row.intendedJobId);
  // A job made through the API under that id is not the drop's (its createJob was refused).
  if (job?.source !== "bucket") return null;
  const initialised = (await jobObject(dc.env, dc.org.id, job.jobId).state()) !== null;
  return { jobId: job.jobId, plan: JSON.parse(row.plan) as DropPlan, itemCount: job.itemCount, initialised };
}

/**
 * Undoes a job cut off while being made (its rows stored, its Job DO not), so that the retry makes it
 * again from its own plan: what inputs were copied is unknown, and no item of it was queued.
 */
async function discardHalfMade(dc: DropContext, jobId: string): Promise<void> {
  await discardJob(dc.ctx, jobId);
  if (await checksRepo(dc.ctx.store.db).job(dc.org.id, jobId))
    throw new Error(`bucket drop job ${jobId} was cut off while being made and could not be discarded yet`);
}

/** A drop whose job exists is `submitted` with it (by the delivery holding its lock), then its items are queued. */
async function markSubmitted(dc: DropContext, drop: DropRecord, jobId: string, plan: DropPlan, delivery: string): Promise<void> {
  // Record the plan before anything can finish the job, so the summary finds it.
  const set = { jobId, plan: JSON.stringify(plan) };
  if (!(await dropsRepo(dc.ctx.store.db).advance(dc.org.id, drop.dropId, "waiting", "submitted", set, delivery))) return;
  await finishSubmitted(dc, { ...drop, ...set, state: "submitted", lockOwner: delivery });
}

/**
 * The files a batch still misses, looked for once: the first look lists every file its manifest names
 * on the drop's row, then HEADs each. A file that arrives after the list is stored crosses itself off
 * (its event), one that was there before is found by its HEAD, so none is missed and none is looked for
 * again by later events. Null when the drop is no longer waiting.
 */
async function lookForFiles(dc: DropContext, drop: DropRecord, items: ManifestItemValue[]): Promise<string[] | null> {
  const repo = dropsRepo(dc.ctx.store.db);
  const listed = await repo.listMissing(dc.org.id, drop.dropId, [...new Set(items.map((it) => it.file))]);
  if (listed === null || listed.length === 0) return listed;
  const heads = await Promise.all(listed.map((name) => dc.ctx.store.files.head(`${drop.folder}${name}`)));
  const found = listed.filter((_, i) => heads[i] !== null);
  return found.length === 0 ? listed : repo.arrived(dc.org.id, drop.dropId, found);
}

/**
 * Builds and submits a drop's job (its caller holds the drop's lock). Each file is read once here; one
 * that is not there is an item error (`waitEnded`: the batch waited for it in vain).
 */
async function submit(dc: DropContext, drop: DropRecord, got: DropItems, delivery: string, waitEnded: boolean): Promise<void> {
  const { store } = dc.ctx;
  const keys = got.items.map((it) => `${drop.folder}${it.file}`);
  const jobId = got.jobId ?? `drop-${drop.dropId.slice("drop_".length)}`;
  const policyName = got.policy ?? DEFAULT_POLICY_NAME;
  const policy = await getLatestPolicy(store.db, { id: dc.org.id, createdAt: dc.org.createdAt }, policyName);
  if (!policy) {
    await finishWithoutJob(
      dc,
      drop,
      { code: "manifest_invalid", detail: `${MANIFEST_NAME}: policy ${policyName} does not exist.` },
      [],
      delivery,
    );
    return;
  }
  const templates = new Map<string, boolean>();
  for (const id of new Set(got.items.map((it) => it.template_id).filter((t): t is string => !!t))) {
    templates.set(id, (await templatesRepo(store.db).get(dc.org.id, id)) !== null);
  }

  // Each file is read and inspected; what cannot be checked is an entry with errors, never skipped silently.
  const entries: PlanEntry[] = [];
  const prepared: PreparedItem[] = [];
  for (const [i, it] of got.items.entries()) {
    const entry: PlanEntry = {
      file: it.file,
      key: keys[i],
      item_index: null,
      subject_reference: it.subject_reference ?? null,
      reference: it.reference ?? null,
      template_id: it.template_id ?? null,
      errors: [],
    };
    entries.push(entry);
    const obj = await store.files.get(keys[i]);
    if (!obj) {
      const why = waitEnded ? "was not in the batch folder when its wait ended" : "was deleted before it was read";
      entry.errors.push({ code: "file_missing", detail: `${it.file} ${why}.` });
      continue;
    }
    // Refused by its size alone, its body never read: an object may be far larger than a Worker's memory.
    if (obj.size > MAX_DOCUMENT_BYTES) {
      await obj.body.cancel();
      entry.errors.push(tooLarge(it.file, obj.size));
      continue;
    }
    if (it.template_id && !templates.get(it.template_id)) {
      await obj.body.cancel();
      entry.errors.push({ code: "template_not_found", detail: `The template ${it.template_id} does not exist.` });
      continue;
    }
    // One file's bytes at a time, for its inspection only: createJob copies the file into the inbox as a
    // stream (the etag pins the version inspected), so a drop's memory does not grow with its files.
    let pages: number;
    try {
      pages = (await dc.ctx.engine.inspect(new Uint8Array(await obj.arrayBuffer()))).pages;
    } catch (err) {
      if (!isVerifyError(err)) throw err;
      const why = err.code === "unsupported_format" ? `${err.message}; documents must be PNG, JPEG, TIFF or PDF` : err.message;
      entry.errors.push({ code: err.code, detail: `${it.file}: ${why}.` });
      continue;
    }
    entry.item_index = prepared.length;
    const item: NormalisedItem = {
      index: prepared.length,
      file: { part: it.file },
      fileName: it.file_name ?? it.file.split("/").pop() ?? it.file,
      subjectReference: it.subject_reference ?? null,
      references: [],
      target: it.target ?? null,
      templateId: it.template_id ?? null,
      inputType: it.input_type ?? null,
      reference: it.reference ?? null,
      process: it.process ?? null,
      metadata: it.metadata ?? null,
    };
    prepared.push({
      item,
      input: { sourceKey: keys[i], etag: obj.etag, contentType: obj.httpMetadata?.contentType ?? null, fileName: item.fileName },
      pages,
      references: [],
    });
  }
  const plan: DropPlan = { manifest: drop.objectKey, policy: `${policy.name}@${policy.version}`, error: null, entries };
  if (prepared.length === 0) {
    await finishWithoutJob(
      dc,
      drop,
      { code: "nothing_to_check", detail: "No file of the drop could be checked; see each item's errors." },
      entries,
      delivery,
    );
    return;
  }

  // Suspension, billing and quota refuse the whole drop: a rejected job, and a summary that says why.
  // (The API answers a suspended organisation 401 unauthorized; a drop has no request to answer.)
  let refusal: ItemError | null = null;
  if (dc.suspendedBy) {
    const through = dc.suspendedBy.id === dc.org.id ? "" : ` through ${dc.suspendedBy.id}`;
    refusal = {
      code: "organisation_suspended",
      detail: `The organisation ${dc.org.id} is suspended${through}; nothing was checked or billed.`,
    };
  } else {
    try {
      await assertBilling(dc.env, dc.org);
      await assertQuota(dc.env, { org: dc.org }, prepared.length);
    } catch (err) {
      if (!isProblemError(err) || (err.code !== "billing_required" && err.code !== "quota_exceeded")) throw err;
      refusal = { code: err.code, detail: err.detail };
    }
  }

  if (refusal) plan.error = refusal;

  // The job id is reserved for this drop, with the plan, before the job is made: a drop that cannot
  // reserve it never touches the job, however many drops name it at once, and a retry of this drop
  // finds the job it made by its reservation.
  const reserved = await dropsRepo(store.db).reserveJob(dc.org.id, drop.dropId, jobId, JSON.stringify(plan), delivery);
  // Another delivery took the lock over (this one outlived it): that one goes on.
  if (reserved === "lost") return;
  if (reserved === "taken") {
    await refuseTakenJobId(dc, drop, jobId, entries, delivery);
    return;
  }
  try {
    await createJob(dc.ctx, {
      jobId,
      mode: "queued",
      policy,
      metadata: got.metadata ?? null,
      actor: ACTOR,
      items: prepared,
      source: "bucket",
    });
  } catch (err) {
    if (!(isProblemError(err) && err.code === "conflict")) throw err;
    // A bucket job under this drop's reservation that madeJob did not take up: made before drops
    // recorded their plan (or discarded since): the retry takes it up, or makes it again.
    if ((await checksRepo(store.db).job(dc.org.id, jobId))?.source === "bucket")
      throw new Error(`bucket drop ${drop.dropId}: job ${jobId} exists; the retry takes it up`);
    // Made through the API (also just now, between the reservation and this).
    await finishWithoutJob(
      dc,
      drop,
      { code: "job_id_in_use", detail: `${MANIFEST_NAME}: job_id ${jobId} is taken by another job; choose another.` },
      entries,
      delivery,
    );
    return;
  }
  await markSubmitted(dc, drop, jobId, plan, delivery);
}

/** The job id a drop names is reserved by another drop: this one checks nothing and says why. */
async function refuseTakenJobId(dc: DropContext, drop: DropRecord, jobId: string, entries: PlanEntry[], delivery: string): Promise<void> {
  const existing = await dropsRepo(dc.ctx.store.db).byIntendedJob(dc.org.id, jobId);
  if (existing && existing.folder === drop.folder) {
    // The manifest uploaded again (a second `aws s3 cp --recursive`): the folder's summary.json is that
    // job's and stays; this drop's refusal goes beside it, under its own name.
    logWarn("bucket drop repeats a job_id this folder's earlier drop submitted", {
      org_id: dc.org.id,
      drop_id: drop.dropId,
      job_id: jobId,
      earlier_drop_id: existing.dropId,
    });
    await finishWithoutJob(
      dc,
      { ...drop, summaryKey: `${drop.folder}${drop.dropId}${SUMMARY_SUFFIX}` },
      {
        code: "job_id_in_use",
        detail: `${MANIFEST_NAME}: job_id ${jobId} was submitted by an earlier upload of this manifest, whose results are (or will be) in ${SUMMARY_NAME}; this upload checked nothing. To check the files again, give the manifest another job_id.`,
      },
      entries,
      delivery,
    );
    return;
  }
  await finishWithoutJob(
    dc,
    drop,
    {
      code: "job_id_in_use",
      detail: `${MANIFEST_NAME}: job_id ${jobId} is taken by another drop's job${existing ? ` (${existing.objectKey})` : ""}; this drop checked nothing. Choose another job_id.`,
    },
    entries,
    delivery,
  );
}

/**
 * The rest of submitting a drop, once it is `submitted` (by this delivery, or by one that failed after
 * that): a refused drop's job is rejected and its summary written; otherwise the job's items not done
 * yet are queued (queueing an item again is harmless: running it twice stores and counts it once). A
 * no-op once done, which the drop's row records by no longer naming the delivery that submitted it.
 */
async function finishSubmitted(dc: DropContext, drop: DropRecord): Promise<void> {
  if (drop.state !== "submitted" || !drop.jobId || !drop.plan || drop.lockOwner === null) return;
  const plan = JSON.parse(drop.plan) as DropPlan;
  const job = jobObject(dc.env, dc.org.id, drop.jobId);
  if (plan.error) {
    // Never queued: nothing of a refused drop is checked or billed, however often this runs.
    const done = await job.reject();
    if (done) await checksRepo(dc.ctx.store.db).mirrorProgress(dc.org.id, drop.jobId, done.state);
    await summariseBucketJob(dc.ctx, drop.jobId);
  } else {
    const done = new Set(await job.completedItems());
    const indexes = plan.entries.map((e) => e.item_index).filter((i): i is number => i !== null && !done.has(i));
    await enqueueItems(dc.ctx, drop.jobId, indexes);
  }
  await dropsRepo(dc.ctx.store.db).submissionFinished(dc.org.id, drop.dropId);
}

function tooLarge(file: string, size: number): ItemError {
  return {
    code: "too_large",
    detail: `${file}: the file has ${size} bytes; a document may have at most ${MAX_DOCUMENT_BYTES} (${MAX_DOCUMENT_BYTES / 1024 / 1024} MB).`,
  };
}

/** A drop that made no job (its manifest or every file was refused): its summary says which and why. */
async function finishWithoutJob(
  dc: DropContext,
  drop: DropRecord,
  error: ItemError,
  entries: PlanEntry[],
  /** The delivery holding the drop's lock. */
  delivery: string,
  status: "not_submitted" | "failed" = "not_submitted",
): Promise<void> {
  const plan: DropPlan = { manifest: drop.objectKey, policy: null, error, entries };
  const summary = renderSummary(dc.env, drop, plan, null, [], status);
  await dc.ctx.store.files.put(drop.summaryKey, JSON.stringify(summary, null, 2), { httpMetadata: { contentType: "application/json" } });
  // Without a job, the drop holds no job id: uploading the manifest again may name it.
  const set = { plan: JSON.stringify(plan), summaryKey: drop.summaryKey, releaseJob: true };
  if (await dropsRepo(dc.ctx.store.db).advance(dc.org.id, drop.dropId, "waiting", "summarised", set, delivery)) {
    await onBucketDropSummaryWritten(dc.env, dc.org, dc.ctx.store, summary);
  }
}

/**
 * Writes summary.json for a finished bucket job (called by every settle of its items once the job is
 * finished, and for rejected drops); only the first call past `submitted` fires the hook.
 */
export async function summariseBucketJob(ctx: CheckContext, jobId: string): Promise<void> {
  const repo = dropsRepo(ctx.store.db);
  const drop = await repo.byJob(ctx.org.id, jobId);
  if (drop?.state !== "submitted" || !drop.plan) return;
  const job = await checksRepo(ctx.store.db).job(ctx.org.id, jobId);
  if (!job || !isFinished(job.status)) return;
  const rows = await checksRepo(ctx.store.db).results(ctx.org.id, jobId, { after: null, limit: 500, decision: null });
  const summary = renderSummary(
    ctx.env,
    drop,
    JSON.parse(drop.plan) as DropPlan,
    job,
    rows.map((r) => storedResultOf(r)).filter((r) => r !== null),
  );
  await ctx.store.files.put(drop.summaryKey, JSON.stringify(summary, null, 2), { httpMetadata: { contentType: "application/json" } });
  if (await repo.advance(ctx.org.id, drop.dropId, "submitted", "summarised"))
    await onBucketDropSummaryWritten(ctx.env, ctx.org, ctx.store, summary);
}

export type DropSummary = ReturnType<typeof renderSummary>;

function renderSummary(
  env: Env,
  drop: DropRecord,
  plan: DropPlan,
  job: { jobId: string; status: string; policy: string; createdAt: string; completedAt: string | null } | null,
  results: NonNullable<ReturnType<typeof storedResultOf>>[],
  /** The status of a drop that made no job: refused before it (`not_submitted`), or dead-lettered (`failed`). */
  withoutJob: "not_submitted" | "failed" = "not_submitted",
) {
  const base = configOf(env).apiBaseUrl ?? "";
  const byIndex = new Map(results.map((r) => [r.item_index, r]));
  const items = plan.entries.map((e) => {
    const r = e.item_index === null ? undefined : byIndex.get(e.item_index);
    const best = r?.best_match ? r.signatures.find((s) => s.index === r.best_match!.signature_index) : r?.signatures[0];
    return {
      file: e.file,
      key: e.key,
      item_index: e.item_index,
      check_id: job && e.item_index !== null ? checkId(job.jobId, e.item_index) : null,
      subject_reference: e.subject_reference,
      reference: e.reference,
      template_id: e.template_id,
      decision: r?.decision ?? null,
      score: r?.score ?? null,
      best_match: r?.best_match ?? null,
      located: best
        ? {
            page: best.page,
            box: best.box,
            box_name: best.box_name ?? null,
            confidence: best.confidence,
            ...(best.cut_off !== undefined ? { cut_off: best.cut_off } : {}),
          }
        : null,
      template: r?.template ?? null,
      // An item the drop never got checked (no job, or a rejected one) carries the drop's error, so that each
      // item counted under counts.errors says why.
      errors: e.errors.length > 0 ? e.errors : (r?.errors ?? ((!job || job.status === "rejected") && plan.error ? [plan.error] : [])),
    };
  });
  return {
    version: 1,
    source: "bucket",
    drop: { key: drop.objectKey, folder: drop.folder, summary_key: drop.summaryKey },
    job_id: job?.jobId ?? null,
    status: job?.status ?? withoutJob,
    status_url: job ? `${base}/sig/checks/${job.jobId}` : null,
    policy: job?.policy ?? plan.policy,
    error: plan.error,
    counts: {
      items: items.length,
      decided: items.filter((i) => i.decision !== null).length,
      errors: items.filter((i) => i.decision === null).length,
    },
    items,
    created_at: job?.createdAt ?? drop.createdAt,
    completed_at: job?.completedAt ?? new Date().toISOString(),
  };
}

/** A drop's summary.json has just been written, once per drop: the tenant's webhooks hear of it. */
async function onBucketDropSummaryWritten(env: Env, org: Org, store: RegionStore, summary: DropSummary): Promise<void> {
  await emitBucketDropCompleted({ env, org, store }, { bucket: bucketNames(env)[org.region], summary });
}
