/**
 * Enrolment as an application service: validates every upload before anything is written, enrols up
 * to three within the request, stores originals in R2 and rows in D1 atomically, queues the rest, and
 * rebuilds the subject's reference model whenever its live references change.
 */
import {
  keptLiveDetail,
  parseReplacement,
  splitSyncAndQueued,
  type ReferenceOutcome,
  type ReferenceSource,
  type Replacement,
} from "../domain/enrolment";
import type { RegionStore } from "../domain/tenancy";
import { newId } from "../domain/ids";
import { ProblemError, fieldName } from "../http/problem";
import { unreadableInput } from "../http/verify-problem";
import { isVerifyError } from "../verify/types";
import { deletePrefix, modelKey, referenceFileKey, subjectPrefix } from "../storage/files";
import { subjectsRepo } from "../storage/subjects";
import { logError, logInfo } from "../util/log";
import { reviewsRepo } from "../storage/reviews";
import type { ReferenceRow } from "../storage/schema/subjects";
import type { VerificationEngine } from "./engine";
import { staleReferences, upgradeReferences } from "./feature-upgrade";
import { forgeabilityPolicy, forgeabilityRecord, parseForgeability, type ForgeabilityRecord } from "./forgeability";

export interface Upload {
  refId: string;
  source: ReferenceSource;
  bytes: Uint8Array;
  contentType: string;
  method: "upload" | "url";
  sourceUrl?: string;
}

/** A queued enrolment: the consumer enrols the stored upload if it is still the current one. */
export interface EnrolMessage {
  kind: "enrol";
  orgId: string;
  region: RegionStore["name"];
  subjectReference: string;
  refId: string;
  uploadId: string;
}

export interface EnrolDeps {
  store: RegionStore;
  engine: VerificationEngine;
  queue: Queue<EnrolMessage>;
}

const MEDIA_TYPES: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  tiff: "image/tiff",
  pdf: "application/pdf",
};

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Maps a file that cannot be read at all to its status: 415 for a format we do not take, else 422. It is
 * named as the request sent it: the multipart part of its ref_id, or the URL at its place in `references`.
 */
function unreadableFile(uploads: Upload[], u: Upload, err: unknown): ProblemError {
  if (!isVerifyError(err)) throw err;
  const field = u.method === "url" ? fieldName("body", "references", uploads.indexOf(u), "url") : fieldName("body", u.refId);
  return unreadableInput(err, field, "file", "References");
}

/**
 * Enrols the uploads of one PUT. Throws a ProblemError (and writes nothing) when any file is not a
 * readable PNG, JPEG, TIFF or PDF. Returns the per-reference outcomes, in request order.
 */
export async function enrolUploads(
  deps: EnrolDeps,
  orgId: string,
  subjectReference: string,
  uploads: Upload[],
): Promise<{ outcomes: ReferenceOutcome[]; queued: number; forgeability: ForgeabilityRecord | null }> {
  // 1. Every file must be structurally readable before anything is stored.
  const formats: string[] = [];
  for (const u of uploads) {
    try {
      formats.push((await deps.engine.inspect(u.bytes)).format);
    } catch (err) {
      throw unreadableFile(uploads, u, err);
    }
  }

  const repo = subjectsRepo(deps.store.db);
  const existing = new Map((await repo.references(orgId, subjectReference)).map((r) => [r.refId, r]));
  const indexed = uploads.map((u, i) => ({ u, format: formats[i] }));
  const { now, queued } = splitSyncAndQueued(indexed);

  // 2. Enrol the first ones now (CPU-bound, one at a time).
  const nowTime = new Date().toISOString();
  const outcomes: ReferenceOutcome[] = [];
  const rows: ReferenceRow[] = [];
  const written: string[] = [];
  const superseded: string[] = [];
  const files: { key: string; bytes: Uint8Array; contentType: string }[] = [];

  for (const { u, format } of now) {
    let result;
    try {
      result = await deps.engine.enrolReference(u.bytes);
    } catch (err) {
      throw unreadableFile(uploads, u, err);
    }
    if (!result.ok) {
      // A rejected upload never replaces a live reference: the previous one, if any, stays.
      outcomes.push({ ref_id: u.refId, status: "rejected", source: u.source, reason: result.reason, detail: result.detail });
      continue;
    }
    const uploadId = newId("upl");
    const key = referenceFileKey(orgId, subjectReference, u.refId, uploadId);
    files.push({ key, bytes: u.bytes, contentType: MEDIA_TYPES[format] ?? u.contentType });
    const prior = existing.get(u.refId);
    // The newer upload wins over a replacement still queued (its row is written without one).
    if (prior) superseded.push(prior.fileKey, ...pendingFile(prior));
    rows.push({
      ...baseRow(orgId, subjectReference, u, uploadId, key, format, await sha256Hex(u.bytes), nowTime),
      status: "enrolled",
      page: result.page,
      box: JSON.stringify(result.box),
      quality: JSON.stringify(result.quality),
      features: JSON.stringify(result.features),
      enrolledAt: nowTime,
    });
    outcomes.push({
      ref_id: u.refId,
      status: "enrolled",
      source: u.source,
      replaced: prior !== undefined,
      quality: result.quality.score,
      page: result.page,
      box: result.box,
    });
  }

  // 3. The rest are stored as queued and enrolled by the enrolment queue's consumer. One that replaces a
  // live reference waits beside it (Replacement): until the consumer has enrolled the new file, the live
  // reference stays in the model, and a rejected file leaves it as it was, as in the request.
  const messages: EnrolMessage[] = [];
  const replacements: { refId: string; replacement: Replacement }[] = [];
  for (const { u, format } of queued) {
    const uploadId = newId("upl");
    const key = referenceFileKey(orgId, subjectReference, u.refId, uploadId);
    const contentType = MEDIA_TYPES[format] ?? u.contentType;
    const sha256 = await sha256Hex(u.bytes);
    files.push({ key, bytes: u.bytes, contentType });
    const prior = existing.get(u.refId);
    if (prior?.status === "enrolled") {
      superseded.push(...pendingFile(prior));
      replacements.push({
        refId: u.refId,
        replacement: {
          uploadId,
          fileKey: key,
          contentType,
          byteSize: u.bytes.byteLength,
          sha256,
          source: u.source,
          method: u.method,
          sourceUrl: u.sourceUrl ?? null,
          createdAt: nowTime,
          status: "queued",
          rejectedReason: null,
          rejectedDetail: null,
        },
      });
    } else {
      if (prior) superseded.push(prior.fileKey, ...pendingFile(prior));
      rows.push({ ...baseRow(orgId, subjectReference, u, uploadId, key, format, sha256, nowTime), status: "queued" });
    }
    messages.push({ kind: "enrol", orgId, region: deps.store.name, subjectReference, refId: u.refId, uploadId });
    outcomes.push({ ref_id: u.refId, status: "queued", source: u.source });
  }

  // 4. Files first, then rows in one transaction; a failure removes what this request wrote.
  try {
    for (const f of files) {
      await deps.store.files.put(f.key, f.bytes, { httpMetadata: { contentType: f.contentType } });
      written.push(f.key);
    }
    await repo.batch([
      repo.touchStatement(orgId, subjectReference, nowTime),
      ...rows.map((r) => repo.upsertReferenceStatement(r)),
      ...replacements.map((r) => repo.setReplacementStatement(orgId, subjectReference, r.refId, JSON.stringify(r.replacement))),
    ]);
  } catch (err) {
    if (written.length > 0) await deps.store.files.delete(written).catch(() => {});
    throw new ProblemError("unavailable", "The references could not be stored; nothing was changed. Retry the request.", {
      headers: { "Retry-After": "5" },
    });
  }
  if (superseded.length > 0) await deps.store.files.delete(superseded).catch(() => {});

  if (messages.length > 0) {
    try {
      await deps.queue.sendBatch(messages.map((body) => ({ body })));
    } catch {
      // Without their messages the queued rows would wait forever: take them back out.
      const queuedRows = rows.filter((r) => r.status === "queued");
      await repo.batch([
        repo.touchStatement(orgId, subjectReference, nowTime),
        ...queuedRows.map((r) => repo.deleteReferenceStatement(orgId, subjectReference, r.refId)),
        ...replacements.map((r) => repo.clearReplacementStatement(orgId, subjectReference, r.refId, r.replacement.uploadId)),
      ]);
      await deps.store.files
        .delete([...queuedRows.map((r) => r.fileKey), ...replacements.map((r) => r.replacement.fileKey)])
        .catch(() => {});
      throw new ProblemError("unavailable", "The enrolment queue is unavailable; the queued references were not kept. Retry them.", {
        headers: { "Retry-After": "5" },
      });
    }
  }

  if (rows.some((r) => r.status === "enrolled")) await rebuildModel(deps, orgId, subjectReference);
  // What the subject's live references say now; references still queued change it when they are enrolled.
  const subject = await repo.get(orgId, subjectReference);
  return { outcomes, queued: messages.length, forgeability: parseForgeability(subject?.forgeability) };
}

function baseRow(
  orgId: string,
  subjectReference: string,
  u: Upload,
  uploadId: string,
  fileKey: string,
  format: string,
  sha256: string,
  now: string,
): ReferenceRow {
  return {
    orgId,
    subjectReference,
    refId: u.refId,
    kind: "anchor",
    source: u.source,
    status: "queued",
    rejectedReason: null,
    rejectedDetail: null,
    method: u.method,
    sourceUrl: u.sourceUrl ?? null,
    fileKey,
    contentType: MEDIA_TYPES[format] ?? u.contentType,
    byteSize: u.bytes.byteLength,
    sha256,
    page: null,
    box: null,
    quality: null,
    features: null,
    outlier: 0,
    learnedFrom: null,
    uploadId,
    createdAt: now,
    enrolledAt: null,
    replacement: null,
  };
}

/** The file of a replacement still waiting beside a reference, which a newer upload supersedes. */
function pendingFile(row: ReferenceRow): string[] {
  const pending = parseReplacement(row.replacement);
  return pending ? [pending.fileKey] : [];
}

/**
 * Rebuilds and stores the reference model from the live references, with the subject's forgeability
 * estimate at the approve threshold of the organisation's default policy (services/forgeability.ts). The
 * model is recorded only if no other change landed meanwhile; the change that did rebuilds its own.
 *
 * Live references whose features an earlier version of the core extracted are first extracted again
 * from their files (services/feature-upgrade.ts), so a change of the features never leaves a reference
 * out of the model, whichever change to the subject comes first after it.
 */
export async function rebuildModel(deps: Pick<EnrolDeps, "store" | "engine">, orgId: string, subjectReference: string): Promise<void> {
  const repo = subjectsRepo(deps.store.db);
  let [subject, refs] = await Promise.all([repo.get(orgId, subjectReference), repo.references(orgId, subjectReference)]);
  if (!subject) return;
  const stale = staleReferences(deps.engine, refs);
  if (stale.length > 0) {
    const outcome = await upgradeReferences(deps, orgId, subjectReference, stale);
    logInfo("references upgraded to the current feature version", {
      subject_reference: subjectReference,
      feature_version: deps.engine.featureVersion,
      upgraded: outcome.upgraded.length,
      failed: outcome.failed,
    });
    // The upgrade bumped the revision: read the rows (and revision) the model is built from again.
    [subject, refs] = await Promise.all([repo.get(orgId, subjectReference), repo.references(orgId, subjectReference)]);
    if (!subject) return;
  }
  const live = refs.filter((r) => r.status === "enrolled" && r.features);
  const previousKey = subject.modelKey;
  if (live.length === 0) {
    if (await repo.setModel(orgId, subjectReference, subject.refsRevision, "")) {
      if (previousKey) await deps.store.files.delete(previousKey);
    }
    return;
  }
  // The estimate is advice: a failed policy read leaves it out, never the model.
  const policy = await forgeabilityPolicy(deps.store.db, orgId).catch((err: unknown) => {
    logError("forgeability policy could not be read", err, { subject_reference: subjectReference });
    return null;
  });
  const build = await deps.engine.buildModel(
    live.map((r) => ({ refId: r.refId, features: JSON.parse(r.features!), learned: r.kind === "learned" })),
    policy ? { approveThreshold: policy.approveThreshold } : undefined,
  );
  const forgeability =
    build.forgeability && policy ? JSON.stringify(forgeabilityRecord(build.forgeability, policy.ref, new Date().toISOString())) : null;
  const key = modelKey(orgId, subjectReference, subject.refsRevision);
  await deps.store.files.put(key, JSON.stringify({ revision: subject.refsRevision, model: build.model }), {
    httpMetadata: { contentType: "application/json" },
  });
  if (await repo.setModel(orgId, subjectReference, subject.refsRevision, key, forgeability)) {
    await repo.batch(
      live.map((r) => repo.setOutlierStatement(orgId, subjectReference, r.refId, build.outliers.includes(r.refId))) as never,
    );
    if (previousKey && previousKey !== key) await deps.store.files.delete(previousKey);
  } else {
    await deps.store.files.delete(key);
  }
}

/**
 * Rebuilds the subject's model when a committed change to its references has no model yet (the
 * process that made the change died before rebuilding), or when a live reference's features are of
 * another version of the core (rebuildModel extracts them again). Cheap when the model is current.
 */
export async function ensureModelCurrent(
  deps: Pick<EnrolDeps, "store" | "engine">,
  orgId: string,
  subjectReference: string,
): Promise<void> {
  const repo = subjectsRepo(deps.store.db);
  const subject = await repo.get(orgId, subjectReference);
  if (!subject) return;
  if (
    subject.modelRevision !== subject.refsRevision ||
    staleReferences(deps.engine, await repo.references(orgId, subjectReference)).length > 0
  )
    await rebuildModel(deps, orgId, subjectReference);
}

/** Enrols one queued upload (the enrolment queue's consumer). Safe to run twice for one message. */
export async function enrolQueued(
  deps: Pick<EnrolDeps, "store" | "engine">,
  msg: EnrolMessage,
): Promise<"enrolled" | "rejected" | "superseded"> {
  const repo = subjectsRepo(deps.store.db);
  const row = await repo.reference(msg.orgId, msg.subjectReference, msg.refId);
  if (!row) return "superseded";
  if (row.uploadId !== msg.uploadId) {
    // Waiting beside a live reference, or replaced by a newer upload, or deleted with it.
    const pending = parseReplacement(row.replacement);
    if (pending?.uploadId !== msg.uploadId) return "superseded";
    return enrolReplacement(deps, msg, row, pending);
  }
  if (row.status !== "queued") {
    // An earlier delivery processed it, and may have died before rebuilding the model.
    await ensureModelCurrent(deps, msg.orgId, msg.subjectReference);
    return row.status === "enrolled" ? "enrolled" : "rejected";
  }
  const result = await enrolStored(deps, row.fileKey);
  if (!result) return "superseded";
  const now = new Date().toISOString();
  const updated: ReferenceRow = result.ok
    ? {
        ...row,
        status: "enrolled",
        page: result.page,
        box: JSON.stringify(result.box),
        quality: JSON.stringify(result.quality),
        features: JSON.stringify(result.features),
        enrolledAt: now,
      }
    : { ...row, status: "rejected", rejectedReason: result.reason, rejectedDetail: result.detail };
  // Guarded on the upload id, so a concurrent replacement is never overwritten; the revision bump is in
  // the same transaction, so the model is known to be stale until it is rebuilt.
  const update = deps.store.db
    .prepare(
      "UPDATE subject_references SET status = ?, page = ?, box = ?, quality = ?, features = ?, enrolled_at = ?, rejected_reason = ?, rejected_detail = ? WHERE org_id = ? AND subject_reference = ? AND ref_id = ? AND upload_id = ? AND status = 'queued'",
    )
    .bind(
      updated.status,
      updated.page,
      updated.box,
      updated.quality,
      updated.features,
      updated.enrolledAt,
      updated.rejectedReason,
      updated.rejectedDetail,
      msg.orgId,
      msg.subjectReference,
      msg.refId,
      msg.uploadId,
    );
  const touch = bumpRevision(deps.store.db, msg, now);
  const [res] = await deps.store.db.batch([update, touch]);
  if (res.meta.changes === 0) return "superseded";
  if (!result.ok) {
    await deps.store.files.delete(row.fileKey);
    return "rejected";
  }
  await rebuildModel(deps, msg.orgId, msg.subjectReference);
  return "enrolled";
}

/** Bumps the subject's refs_revision with a change to its references (in the same batch): the model is stale. */
function bumpRevision(db: D1Database, msg: EnrolMessage, now: string): D1PreparedStatement {
  return db
    .prepare("UPDATE subjects SET updated_at = ?, refs_revision = refs_revision + 1 WHERE org_id = ? AND subject_reference = ?")
    .bind(now, msg.orgId, msg.subjectReference);
}

/** The enrolment of a stored upload's file; null when the file is gone (deleted meanwhile). */
async function enrolStored(deps: Pick<EnrolDeps, "store" | "engine">, fileKey: string) {
  const object = await deps.store.files.get(fileKey);
  if (!object) return null;
  const bytes = new Uint8Array(await object.arrayBuffer());
  try {
    return await deps.engine.enrolReference(bytes);
  } catch (err) {
    if (!isVerifyError(err)) throw err;
    return { ok: false as const, reason: err.code as never, detail: err.message };
  }
}

/**
 * Enrols a queued upload waiting beside the live reference of its ref_id. Enrolled, it takes the live
 * reference's place in one guarded update (the old file is deleted after); rejected, it stays recorded as a
 * rejected replacement and the live reference is left as it was.
 */
async function enrolReplacement(
  deps: Pick<EnrolDeps, "store" | "engine">,
  msg: EnrolMessage,
  row: ReferenceRow,
  pending: Replacement,
): Promise<"enrolled" | "rejected" | "superseded"> {
  // An earlier delivery rejected it (an enrolled one is no longer a replacement).
  if (pending.status !== "queued") return "rejected";
  const result = await enrolStored(deps, pending.fileKey);
  if (!result) return "superseded";
  const now = new Date().toISOString();
  if (!result.ok) {
    return (await rejectReplacement(deps.store, msg, pending, result.reason, result.detail)) ? "rejected" : "superseded";
  }
  const updated: ReferenceRow = {
    ...row,
    source: pending.source,
    status: "enrolled",
    rejectedReason: null,
    rejectedDetail: null,
    method: pending.method,
    sourceUrl: pending.sourceUrl,
    fileKey: pending.fileKey,
    contentType: pending.contentType,
    byteSize: pending.byteSize,
    sha256: pending.sha256,
    page: result.page,
    box: JSON.stringify(result.box),
    quality: JSON.stringify(result.quality),
    features: JSON.stringify(result.features),
    outlier: 0,
    uploadId: pending.uploadId,
    createdAt: pending.createdAt,
    enrolledAt: now,
    replacement: null,
  };
  // Guarded on both uploads: the live one it replaces and its own, so a newer upload or a delete that landed
  // meanwhile wins. The revision bump is in the same transaction, so the model is known to be stale.
  const swap = deps.store.db
    .prepare(
      "UPDATE subject_references SET source = ?, status = 'enrolled', rejected_reason = NULL, rejected_detail = NULL, method = ?, source_url = ?, file_key = ?, content_type = ?, byte_size = ?, sha256 = ?, page = ?, box = ?, quality = ?, features = ?, outlier = 0, upload_id = ?, created_at = ?, enrolled_at = ?, replacement = NULL WHERE org_id = ? AND subject_reference = ? AND ref_id = ? AND upload_id = ? AND json_extract(replacement, '$.uploadId') = ?",
    )
    .bind(
      updated.source,
      updated.method,
      updated.sourceUrl,
      updated.fileKey,
      updated.contentType,
      updated.byteSize,
      updated.sha256,
      updated.page,
      updated.box,
      updated.quality,
      updated.features,
      updated.uploadId,
      updated.createdAt,
      updated.enrolledAt,
      msg.orgId,
      msg.subjectReference,
      msg.refId,
      row.uploadId,
      msg.uploadId,
    );
  const touch = bumpRevision(deps.store.db, msg, now);
  const [res] = await deps.store.db.batch([swap, touch]);
  if (res.meta.changes === 0) return "superseded";
  await deps.store.files.delete(row.fileKey);
  await rebuildModel(deps, msg.orgId, msg.subjectReference);
  return "enrolled";
}

/**
 * Records a queued replacement as rejected (guarded: still this upload's, still queued) and deletes its
 * file, as a rejected queued reference's is. The live reference is not touched. False when superseded.
 */
async function rejectReplacement(
  store: RegionStore,
  msg: EnrolMessage,
  pending: Replacement,
  reason: string,
  detail: string,
): Promise<boolean> {
  const rejected: Replacement = {
    ...pending,
    status: "rejected",
    rejectedReason: reason,
    rejectedDetail: keptLiveDetail(detail, msg.refId),
  };
  const res = await store.db
    .prepare(
      "UPDATE subject_references SET replacement = ? WHERE org_id = ? AND subject_reference = ? AND ref_id = ? AND json_extract(replacement, '$.uploadId') = ? AND json_extract(replacement, '$.status') = 'queued'",
    )
    .bind(JSON.stringify(rejected), msg.orgId, msg.subjectReference, msg.refId, msg.uploadId)
    .run();
  if (res.meta.changes === 0) return false;
  await store.files.delete(pending.fileKey);
  return true;
}

/** Marks a queued upload whose messages were dead-lettered as rejected, so it never waits forever. */
export async function failQueued(store: RegionStore, msg: EnrolMessage): Promise<void> {
  const repo = subjectsRepo(store.db);
  const row = await repo.reference(msg.orgId, msg.subjectReference, msg.refId);
  if (!row) return;
  const pending = parseReplacement(row.replacement);
  if (row.uploadId !== msg.uploadId && pending?.uploadId === msg.uploadId && pending.status === "queued") {
    // A replacement: the live reference stays; the replacement is recorded as rejected.
    await rejectReplacement(
      store,
      msg,
      pending,
      "processing_failed",
      "The reference could not be enrolled after repeated attempts; upload it again.",
    );
    return;
  }
  if (row.uploadId !== msg.uploadId || row.status !== "queued") return;
  const res = await store.db
    .prepare(
      "UPDATE subject_references SET status = 'rejected', rejected_reason = 'processing_failed', rejected_detail = ? WHERE org_id = ? AND subject_reference = ? AND ref_id = ? AND upload_id = ? AND status = 'queued'",
    )
    .bind(
      "The reference could not be enrolled after repeated attempts; upload it again.",
      msg.orgId,
      msg.subjectReference,
      msg.refId,
      msg.uploadId,
    )
    .run();
  if (res.meta.changes > 0) await store.files.delete(row.fileKey);
}

/** Hard-deletes a subject: its references, model and files. Returns false when it does not exist. */
export async function deleteSubject(store: RegionStore, orgId: string, subjectReference: string): Promise<boolean> {
  const repo = subjectsRepo(store.db);
  if (!(await repo.get(orgId, subjectReference))) return false;
  const prefix = subjectPrefix(orgId, subjectReference);
  await deletePrefix(store.files, prefix);
  await repo.batch([...repo.deleteSubjectStatements(orgId, subjectReference)]);
  // Its reviews and learning blocks go too: a subject enrolled again under the name starts afresh.
  await store.db.batch(reviewsRepo(store.db).deleteSubjectStatements(orgId, subjectReference));
  // An enrolment racing with the delete may have written a file after the first sweep.
  await deletePrefix(store.files, prefix);
  return true;
}

/** Hard-deletes one reference and its file, then rebuilds the model. */
export async function deleteReference(
  deps: Pick<EnrolDeps, "store" | "engine">,
  orgId: string,
  subjectReference: string,
  refId: string,
): Promise<"deleted" | "not_found" | "learned"> {
  const repo = subjectsRepo(deps.store.db);
  const row = await repo.reference(orgId, subjectReference, refId);
  if (!row) return "not_found";
  if (row.kind === "learned") return "learned";
  await repo.batch([
    repo.deleteReferenceStatement(orgId, subjectReference, refId),
    repo.touchStatement(orgId, subjectReference, new Date().toISOString()),
  ]);
  // With a replacement still waiting beside it: its message then finds no row and does nothing.
  await deps.store.files.delete([row.fileKey, ...pendingFile(row)]);
  await rebuildModel(deps, orgId, subjectReference);
  return "deleted";
}
