/**
 * Review and learning as an application service (docs/learning.md):
 *
 *   confirmItem   a reviewer's "genuine" verdict: kept once, audited, queued for learning (or refused at
 *                 once when the item could never be learned)
 *   rejectItem    a reviewer's "forged" verdict: kept once, audited, never learned
 *   learnConfirmed  the learning queue's consumer: applies the entry bar (src/domain/learning-bar.ts),
 *                 then stores the learned reference and rebuilds the model under the revision guard
 *   unlearn       removes learned references by check time or source check and blocks those checks
 */
import {
  DEFAULT_LEARNED_CAP,
  candidateRefusal,
  confirmRefusal,
  evictions,
  learnedRefId,
  recordRefusal,
  type Refusal,
} from "../domain/learning-bar";
import { checkId } from "../domain/job";
import { DEFAULT_LEARNING_MIN_SCORE, DEFAULT_QUALITY_FLOOR } from "../domain/policy-defaults";
import type { Org, RegionStore } from "../domain/tenancy";
import { ProblemError, notFound } from "../http/problem";
import { auditStatement } from "../storage/audit";
import { checksRepo } from "../storage/checks";
import { referenceFileKey } from "../storage/files";
import { reviewsRepo, type ReviewRow, type Verdict } from "../storage/reviews";
import type { ReferenceRow } from "../storage/schema/subjects";
import type { CheckItemRow } from "../storage/schema/checks";
import type { CheckCrops } from "./check-crops";
import { subjectsRepo } from "../storage/subjects";
import { isVerifyError } from "../verify/types";
import { storedResultOf, type StoredResult } from "./check-results";
import { rebuildModel } from "./enrolment";
import { staleReferences } from "./feature-upgrade";
import type { VerificationEngine } from "./engine";
import { inboxExpired } from "./inbox";
import type { LearningEngine } from "./learning-engine-live";
import { logError } from "../util/log";

/** A confirmed item waiting for the learning consumer. */
export interface LearnMessage {
  kind: "learn";
  orgId: string;
  region: RegionStore["name"];
  jobId: string;
  index: number;
}

export interface ReviewDeps {
  store: RegionStore;
  queue: Queue<LearnMessage>;
  /** Told of a confirmation refused at once, as learnConfirmed tells of its refusals (reference.learned). */
  announce?: (outcome: LearningOutcome) => Promise<void>;
}

export interface LearningDeps {
  store: RegionStore;
  engine: VerificationEngine;
  learner: LearningEngine;
  /** Learned references kept per subject (the oldest learned goes first), unless the check's policy sets learning.max_references. */
  cap?: number;
  /** The crop a confirmed signature is learned from, rendered from the item's input (services/check-crops.ts). */
  crops: Pick<CheckCrops, "learnedCrop">;
  /** Told of every learning outcome once it is committed (the tenant's webhooks: reference.learned). */
  announce?: (outcome: LearningOutcome) => Promise<void>;
}

/** What a learning outcome announces (learned, refused, evicted, unlearned). */
export interface LearningOutcome {
  orgId: string;
  subjectReference: string;
  checkId: string;
  outcome: "learned" | "refused" | "evicted" | "unlearned";
  refId: string | null;
  reason: string | null;
  detail: string | null;
}

/** The policy figures learning reads, from the job's frozen policy spec. */
function learningPolicy(policySpec: string): { enabled: boolean; min_score: number; quality_floor: number; max_references: number | null } {
  const spec = JSON.parse(policySpec) as {
    quality_floor?: number;
    learning?: { enabled?: boolean; min_score?: number; max_references?: number };
  };
  return {
    max_references: spec.learning?.max_references ?? null,
    enabled: spec.learning?.enabled ?? true,
    min_score: spec.learning?.min_score ?? DEFAULT_LEARNING_MIN_SCORE,
    quality_floor: spec.quality_floor ?? DEFAULT_QUALITY_FLOOR,
  };
}

const conflict = (detail: string) => new ProblemError("conflict", detail);

interface LoadedItem {
  result: StoredResult;
  subjectReference: string;
  expired: boolean;
  policySpec: string;
}

/**
 * The item a verdict is about; 404 when missing. 409 only when no verdict can be recorded: the item has
 * no decision yet (its job is still running) or none at all (an item error), or it was checked against
 * references sent with it rather than a subject, so there is nobody to record the verdict for.
 */
async function loadReviewable(store: RegionStore, orgId: string, jobId: string, index: number): Promise<LoadedItem> {
  const repo = checksRepo(store.db);
  const [job, item] = await Promise.all([repo.job(orgId, jobId), repo.item(orgId, jobId, index)]);
  if (!job || !item) throw notFound("item");
  const result = storedResultOf(item);
  if (item.state !== "done") {
    // A job that ended (rejected, failed) leaves items it never checked: they will not get a decision.
    if (job.status === "queued" || job.status === "running")
      throw conflict("The item has no decision to review yet: its job is still checking it.");
    throw conflict(`The item has no decision to review: its job ended ${job.status} before checking it.`);
  }
  if (!result || result.decision === null) throw conflict("The item has no decision to review: its check ended in an error.");
  if (!item.subjectReference) throw conflict("The item was not checked against a subject: there is no subject to record a verdict for.");
  return { result, subjectReference: item.subjectReference, expired: inboxExpired(job), policySpec: job.policySpec };
}

/**
 * Records the reviewer's confirmation that an item is genuine; the first one is kept. It is recorded
 * whatever has become of the item's input or subject since the check: when learning is off, or the item
 * could never be learned (confirmRefusal), the record says so at once and nothing is queued.
 */
export async function confirmItem(
  deps: ReviewDeps,
  org: Org,
  jobId: string,
  index: number,
  actor: string,
  requestId?: string,
): Promise<{ review: ReviewRow; created: boolean }> {
  const reviews = reviewsRepo(deps.store.db);
  const first = await reviews.get(org.id, jobId, index);
  if (first) return keepFirst(first, "genuine");

  const item = await loadReviewable(deps.store, org.id, jobId, index);
  const policy = learningPolicy(item.policySpec);
  const learningOn = org.learning && policy.enabled;
  let refusal: Refusal | null = null;
  if (learningOn) {
    const subject = await subjectsRepo(deps.store.db).get(org.id, item.subjectReference);
    refusal = confirmRefusal({
      inputAvailable: !item.expired,
      signatures: item.result.signatures.length,
      // A subject deleted, or deleted and enrolled again, is not the person the check was about.
      subjectGone: !subject
        ? "The subject has been deleted since the check."
        : subject.createdAt > item.result.created_at
          ? "The subject was deleted and enrolled again since the check."
          : null,
    });
  }
  const now = new Date().toISOString();
  const review: ReviewRow = {
    orgId: org.id,
    jobId,
    itemIndex: index,
    subjectReference: item.subjectReference,
    verdict: "genuine",
    reviewedBy: actor,
    reviewedAt: now,
    learning: !learningOn ? "off" : refusal ? "refused" : "queued",
    learningReason: !learningOn ? "learning_off" : (refusal?.reason ?? null),
    learningDetail: !learningOn
      ? org.learning
        ? `The policy ${item.result.versions.policy} does not learn.`
        : "Learning is off for the organisation."
      : (refusal?.detail ?? null),
    refId: null,
    learnedAt: null,
    updatedAt: now,
  };
  const [inserted] = await deps.store.db.batch([
    reviews.insertStatement(review),
    auditStatement(deps.store.db, {
      orgId: org.id,
      actor,
      action: "check.confirm",
      target: checkId(jobId, index),
      detail: {
        subject_reference: item.subjectReference,
        decision: item.result.decision,
        learning: review.learning,
        learning_reason: review.learningReason,
      },
      requestId,
    }),
  ]);
  if (inserted.meta.changes === 0) {
    // Another confirmation won the race: its record is the one kept (the audit row still says who tried).
    return keepFirst((await reviews.get(org.id, jobId, index))!, "genuine");
  }
  if (refusal) {
    // Subscribers hear of every refused confirmation, whichever stage of the bar refused it. The
    // confirmation is already kept: a failure to announce it must not turn the answer into an error,
    // whose retry would find the record and announce nothing either.
    try {
      await deps.announce?.({
        orgId: org.id,
        subjectReference: item.subjectReference,
        checkId: checkId(jobId, index),
        outcome: "refused",
        refId: null,
        reason: refusal.reason,
        detail: refusal.detail,
      });
    } catch (err) {
      logError("confirm: the refusal could not be announced (reference.learned)", err, { job_id: jobId, item_index: index });
    }
  }
  if (review.learning === "queued") {
    try {
      await deps.queue.send({ kind: "learn", orgId: org.id, region: deps.store.name, jobId, index });
    } catch {
      // Without its message the review would wait forever: take it back so the caller can retry.
      await deps.store.db
        .prepare("DELETE FROM check_reviews WHERE org_id = ? AND job_id = ? AND item_index = ? AND learning = 'queued'")
        .bind(org.id, jobId, index)
        .run();
      throw new ProblemError("unavailable", "The learning queue is unavailable; the confirmation was not kept. Retry it.", {
        headers: { "Retry-After": "5" },
      });
    }
  }
  return { review, created: true };
}

function keepFirst(first: ReviewRow, wanted: Verdict): { review: ReviewRow; created: boolean } {
  if (first.verdict !== wanted) {
    throw conflict(
      `The item was already reviewed as ${first.verdict} by ${first.reviewedBy} at ${first.reviewedAt}; the first verdict is kept.`,
    );
  }
  return { review: first, created: false };
}

/** Records the reviewer's verdict that an item is forged; the first verdict is kept; never learned. */
export async function rejectItem(
  store: RegionStore,
  org: Org,
  jobId: string,
  index: number,
  actor: string,
  requestId?: string,
): Promise<{ review: ReviewRow; created: boolean }> {
  const reviews = reviewsRepo(store.db);
  const first = await reviews.get(org.id, jobId, index);
  if (first) return keepFirst(first, "forged");
  const item = await loadReviewable(store, org.id, jobId, index);
  const now = new Date().toISOString();
  const review: ReviewRow = {
    orgId: org.id,
    jobId,
    itemIndex: index,
    subjectReference: item.subjectReference,
    verdict: "forged",
    reviewedBy: actor,
    reviewedAt: now,
    learning: "not_applicable",
    learningReason: null,
    learningDetail: "A forged verdict is never learned.",
    refId: null,
    learnedAt: null,
    updatedAt: now,
  };
  const [inserted] = await store.db.batch([
    reviews.insertStatement(review),
    auditStatement(store.db, {
      orgId: org.id,
      actor,
      action: "check.reject",
      target: checkId(jobId, index),
      detail: { subject_reference: item.subjectReference, decision: item.result.decision },
      requestId,
    }),
  ]);
  if (inserted.meta.changes === 0) return keepFirst((await reviews.get(org.id, jobId, index))!, "forged");
  return { review, created: true };
}

/** How the subject changed since the check in a way that makes the check's score stale, or null. */
function subjectChange(result: StoredResult, subjectCreatedAt: string, refs: ReferenceRow[]): string | null {
  if (subjectCreatedAt > result.created_at) return "The subject was deleted and enrolled again since the check.";
  const bestRef = result.best_match?.ref_id;
  if (!bestRef) return null;
  const ref = refs.find((r) => r.refId === bestRef);
  if (ref?.status !== "enrolled") return `The reference ${bestRef} the check matched best has been removed since.`;
  if (ref.enrolledAt && ref.enrolledAt > result.completed_at)
    return `The reference ${bestRef} the check matched best has been replaced since.`;
  return null;
}

/**
 * The learning queue's consumer for one confirmed item. Safe to run twice: only a review still
 * `queued` is acted on, and the learned reference's id and file key follow from the check id.
 */
export async function learnConfirmed(deps: LearningDeps, msg: LearnMessage): Promise<ReviewRow["learning"] | "gone"> {
  const reviews = reviewsRepo(deps.store.db);
  const review = await reviews.get(msg.orgId, msg.jobId, msg.index);
  if (!review) return "gone";
  if (review.learning !== "queued") return review.learning;
  const id = checkId(msg.jobId, msg.index);
  const refuse = async (r: Refusal) => {
    await reviews
      .setLearningStatement(msg.orgId, msg.jobId, msg.index, ["queued"], { learning: "refused", reason: r.reason, detail: r.detail })
      .run();
    await deps.announce?.({
      orgId: msg.orgId,
      subjectReference: review.subjectReference,
      checkId: id,
      outcome: "refused",
      refId: null,
      reason: r.reason,
      detail: r.detail,
    });
    return "refused" as const;
  };

  const checks = checksRepo(deps.store.db);
  const subjects = subjectsRepo(deps.store.db);
  let [job, item, subject, refs, blocked] = await Promise.all([
    checks.job(msg.orgId, msg.jobId),
    checks.item(msg.orgId, msg.jobId, msg.index),
    subjects.get(msg.orgId, review.subjectReference),
    subjects.references(msg.orgId, review.subjectReference),
    reviews.isBlocked(msg.orgId, review.subjectReference, id),
  ]);
  if (subject && staleReferences(deps.engine, refs).length > 0) {
    // The candidate is judged against the anchors' features: those of an earlier core version are
    // extracted again first (rebuildModel upgrades them), since features of two versions do not compare.
    await rebuildModel(deps, msg.orgId, review.subjectReference);
    [subject, refs] = await Promise.all([
      subjects.get(msg.orgId, review.subjectReference),
      subjects.references(msg.orgId, review.subjectReference),
    ]);
  }
  const result = item ? storedResultOf(item) : null;
  if (!job || !item || !result) return refuse({ reason: "input_expired", detail: "The check is no longer held." });
  if (!subject) return refuse({ reason: "subject_changed", detail: "The subject has been deleted." });
  const policy = learningPolicy(job.policySpec);
  const anchors = refs.filter((r) => r.kind === "anchor" && r.status === "enrolled" && r.features && r.outlier === 0);
  const bestSignature = result.best_match ? result.signatures.findIndex((s) => s.index === result.best_match!.signature_index) : -1;

  const refusal = recordRefusal({
    blocked,
    inputAvailable: !inboxExpired(job),
    signatureScores: result.signatures.map((s) => s.score),
    bestSignature: bestSignature >= 0 ? bestSignature : null,
    score: result.score,
    quality: result.quality?.score ?? null,
    policy: { quality_floor: policy.quality_floor, min_score: policy.min_score },
    anchors: anchors.length,
    subjectChange: subjectChange(result, subject.createdAt, refs),
  });
  if (refusal) return refuse(refusal);

  // The candidate is the best signature's crop as the check's features saw it (a form's rules painted
  // out), enrolled as any bare signature image would be.
  const cropBytes = await deps.crops.learnedCrop(item, result.signatures[bestSignature]);
  if (!cropBytes) return refuse({ reason: "input_expired", detail: "The check's input has expired from the job's inbox." });
  let enrolled;
  try {
    enrolled = await deps.engine.enrolReference(cropBytes);
  } catch (err) {
    if (!isVerifyError(err)) throw err;
    return refuse({ reason: "low_quality", detail: `The signature's crop cannot be read (${err.code}: ${err.message}).` });
  }
  if (!enrolled.ok) return refuse({ reason: "low_quality", detail: `The signature cannot be learned: ${enrolled.detail}` });
  const vsAnchors = await deps.learner.compareToAnchors(
    enrolled.features,
    anchors.map((a) => ({ refId: a.refId, features: JSON.parse(a.features!) })),
  );
  const candidate = candidateRefusal({
    quality: enrolled.quality.score,
    qualityFloor: policy.quality_floor,
    distanceToAnchors: vsAnchors.distance,
    anchorScore: vsAnchors.score,
    minScore: policy.min_score,
  });
  if (candidate) return refuse(candidate);

  // Learn it: the new reference, the cap's evictions, the review and the revision bump in one transaction.
  const refId = await learnedRefId(msg.jobId, msg.index);
  const fileKey = referenceFileKey(msg.orgId, review.subjectReference, refId, "learned");
  await deps.store.files.put(fileKey, cropBytes, { httpMetadata: { contentType: "image/png" } });
  const now = new Date().toISOString();
  const learned = refs
    .filter((r) => r.kind === "learned" && r.status === "enrolled" && r.refId !== refId)
    .sort((a, b) => (a.enrolledAt ?? "").localeCompare(b.enrolledAt ?? "") || a.refId.localeCompare(b.refId));
  const cap = policy.max_references ?? deps.cap ?? DEFAULT_LEARNED_CAP;
  const evicted = evictions([...learned.map((r) => r.refId), refId], cap);
  const row: ReferenceRow = {
    orgId: msg.orgId,
    subjectReference: review.subjectReference,
    refId,
    kind: "learned",
    source: "learned",
    status: "enrolled",
    rejectedReason: null,
    rejectedDetail: null,
    replacement: null,
    method: "learned",
    sourceUrl: null,
    fileKey,
    contentType: "image/png",
    byteSize: cropBytes.byteLength,
    sha256: await sha256Hex(cropBytes),
    page: enrolled.page,
    box: JSON.stringify(enrolled.box),
    quality: JSON.stringify(enrolled.quality),
    features: JSON.stringify(enrolled.features),
    outlier: 0,
    learnedFrom: id,
    uploadId: "learned",
    createdAt: now,
    enrolledAt: now,
  };
  const evictedRows = learned.filter((r) => evicted.includes(r.refId));
  await subjects.batch([
    subjects.upsertReferenceStatement(row),
    ...evictedRows.map((r) => subjects.deleteReferenceStatement(msg.orgId, review.subjectReference, r.refId)),
  ] as never);
  await deps.store.db.batch([
    reviews.setLearningStatement(msg.orgId, msg.jobId, msg.index, ["queued"], { learning: "learned", refId, learnedAt: now }),
    ...evictedRows.map((r) =>
      reviews.setRefStateStatement(
        msg.orgId,
        review.subjectReference,
        r.refId,
        "evicted",
        `Removed to keep at most ${cap} learned references.`,
      ),
    ),
    bumpRevision(deps.store.db, msg.orgId, review.subjectReference, now),
  ]);
  if (evictedRows.length > 0) await deps.store.files.delete(evictedRows.map((r) => r.fileKey)).catch(() => {});
  await rebuildModel(deps, msg.orgId, review.subjectReference);
  await deps.announce?.({
    orgId: msg.orgId,
    subjectReference: review.subjectReference,
    checkId: id,
    outcome: "learned",
    refId,
    reason: null,
    detail: null,
  });
  for (const r of evictedRows) {
    await deps.announce?.({
      orgId: msg.orgId,
      subjectReference: review.subjectReference,
      checkId: r.learnedFrom ?? "",
      outcome: "evicted",
      refId: r.refId,
      reason: "cap",
      detail: null,
    });
  }
  return "learned";
}

/** Bumps the references revision of an existing subject (never creates one): its model is then stale until rebuilt. */
function bumpRevision(db: D1Database, orgId: string, subjectReference: string, now: string): D1PreparedStatement {
  return db
    .prepare("UPDATE subjects SET updated_at = ?, refs_revision = refs_revision + 1 WHERE org_id = ? AND subject_reference = ?")
    .bind(now, orgId, subjectReference);
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Selects learned references by check time (`since`) or by source check ids (`job_id/index`). */
export type UnlearnSelection = { since: string } | { checks: string[] };

export interface UnlearnOutcome {
  removed: { ref_id: string; learned_from: string | null; learned_at: string | null }[];
  blocked_checks: string[];
  blocked_since: string | null;
}

/**
 * Removes the selected learned references, deletes their files, rebuilds the model and blocks their
 * source checks (and, for `since`, every check of the subject recorded from `since` up to now) from
 * being learned again. Returns null when the subject does not exist.
 */
export async function unlearn(
  deps: Pick<LearningDeps, "store" | "engine" | "announce">,
  orgId: string,
  subjectReference: string,
  selection: UnlearnSelection,
  actor: string,
  requestId?: string,
): Promise<UnlearnOutcome | null> {
  const subjects = subjectsRepo(deps.store.db);
  const reviews = reviewsRepo(deps.store.db);
  const checks = checksRepo(deps.store.db);
  const subject = await subjects.get(orgId, subjectReference);
  if (!subject) return null;
  const learned = (await subjects.references(orgId, subjectReference)).filter((r) => r.kind === "learned");

  let selected: ReferenceRow[];
  if ("since" in selection) {
    // By check time: the source check's created_at (its learned time when the check is no longer held).
    const times = await Promise.all(
      learned.map(async (r) => {
        const [jobId, index] = splitCheckId(r.learnedFrom);
        const item = jobId !== null ? await checks.item(orgId, jobId, index) : null;
        return item?.createdAt ?? r.createdAt;
      }),
    );
    const since = Date.parse(selection.since);
    selected = learned.filter((_, i) => Date.parse(times[i]) >= since);
  } else {
    const wanted = new Set(selection.checks);
    selected = learned.filter((r) => r.learnedFrom !== null && wanted.has(r.learnedFrom));
  }

  const now = new Date().toISOString();
  const blocked = new Set<string>(selected.map((r) => r.learnedFrom).filter((c): c is string => c !== null));
  if ("checks" in selection) for (const c of selection.checks) blocked.add(c);
  const statements: D1PreparedStatement[] = [
    ...selected.map((r) =>
      deps.store.db
        .prepare("DELETE FROM subject_references WHERE org_id = ? AND subject_reference = ? AND ref_id = ?")
        .bind(orgId, subjectReference, r.refId),
    ),
    ...selected.map((r) => reviews.setRefStateStatement(orgId, subjectReference, r.refId, "unlearned", `Unlearned by ${actor} at ${now}.`)),
    ...[...blocked].map((c) => reviews.blockStatement(orgId, subjectReference, c, actor, now)),
  ];
  if ("since" in selection)
    statements.push(reviews.blockSinceStatement(orgId, subjectReference, new Date(Date.parse(selection.since)).toISOString(), actor, now));
  if (selected.length > 0) statements.push(bumpRevision(deps.store.db, orgId, subjectReference, now));
  statements.push(
    auditStatement(deps.store.db, {
      orgId,
      actor,
      action: "reference.unlearn",
      target: subjectReference,
      detail: {
        ...("since" in selection ? { since: selection.since } : { checks: selection.checks }),
        removed: selected.map((r) => r.refId),
      },
      requestId,
    }),
  );
  await deps.store.db.batch(statements);
  if (selected.length > 0) {
    await deps.store.files.delete(selected.map((r) => r.fileKey)).catch(() => {});
    await rebuildModel(deps, orgId, subjectReference);
  }
  for (const r of selected) {
    await deps.announce?.({
      orgId,
      subjectReference,
      checkId: r.learnedFrom ?? "",
      outcome: "unlearned",
      refId: r.refId,
      reason: null,
      detail: null,
    });
  }
  return {
    removed: selected.map((r) => ({ ref_id: r.refId, learned_from: r.learnedFrom, learned_at: r.enrolledAt })),
    blocked_checks: [...blocked].sort(),
    blocked_since: "since" in selection ? selection.since : null,
  };
}

/** `job_id/index` into its parts; [null, 0] when it is not one. */
function splitCheckId(id: string | null): [string | null, number] {
  const m = id ? /^(.+)\/(\d+)$/.exec(id) : null;
  return m ? [m[1], Number(m[2])] : [null, 0];
}

/** A review as the API shows it (Confirmed, Rejected, and the `review` member of a checked item). */
export function renderReview(r: ReviewRow) {
  return {
    check_id: checkId(r.jobId, r.itemIndex),
    job_id: r.jobId,
    item_index: r.itemIndex,
    subject_reference: r.subjectReference,
    verdict: r.verdict,
    reviewed_by: r.reviewedBy,
    reviewed_at: r.reviewedAt,
    learning: {
      status: r.learning,
      reason: r.learningReason,
      detail: r.learningDetail,
      ref_id: r.refId,
      learned_at: r.learnedAt,
    },
  };
}
