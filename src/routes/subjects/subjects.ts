import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { defineRoute, problems } from "../../http/route";
import { ProblemError, fieldName, notFound } from "../../http/problem";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { configOf } from "../../config";
import { deleteSubject } from "../../services/enrolment";
import { subjectsRepo } from "../../storage/subjects";
import { reviewsRepo, type ReviewRow } from "../../storage/reviews";
import { renderReview } from "../../services/learning";
import type { ReferenceRow, SubjectRow } from "../../storage/schema/subjects";
import { parseReplacement, type ReferenceSource } from "../../domain/enrolment";
import { recordAudit } from "../../storage/audit";
import { recentChecksOf } from "../../services/subject-checks";
import { parseForgeability } from "../../services/forgeability";
import { revokeSubjectSessions } from "../../services/sessions";
import { Subject, SubjectList, SubjectParams } from "./schemas";
import { queryInteger } from "../../http/schemas";

const LIST_CURSOR = "subjects.list";

const listSubjects = defineRoute(
  { permission: "sig:subjects:read" },
  {
    method: "get",
    path: "/sig/subjects",
    tags: ["subjects"],
    summary: "List subjects, newest first",
    request: {
      query: z.object({
        q: z
          .string()
          .regex(/^[A-Za-z0-9._-]{0,128}$/, "must be at most 128 characters of [A-Za-z0-9._-]")
          .optional()
          .openapi({ description: "Prefix of subject_reference (case-sensitive)" }),
        cursor: z.string().optional().openapi({ description: "next_cursor of the previous page" }),
        limit: queryInteger({ min: 1, max: 200 }).default(50).openapi({ description: "1 to 200, default 50" }),
      }),
    },
    responses: {
      200: { description: "A page of subjects", content: { "application/json": { schema: SubjectList } } },
      ...problems(400, 401, 403, 421, 429),
    },
  },
);

const getSubject = defineRoute(
  { permission: "sig:subjects:read" },
  {
    method: "get",
    path: "/sig/subjects/{subject_reference}",
    tags: ["subjects"],
    summary: "A subject with its references, their provenance, and its recent checks",
    request: { params: SubjectParams },
    responses: {
      200: { description: "The subject", content: { "application/json": { schema: Subject } } },
      ...problems(401, 403, 404, 421, 429),
    },
  },
);

const removeSubject = defineRoute(
  { permission: "sig:references:delete" },
  {
    method: "delete",
    path: "/sig/subjects/{subject_reference}",
    tags: ["subjects"],
    summary: "Hard-delete a subject, its references and their files; revokes its sessions",
    request: { params: SubjectParams },
    responses: { 204: { description: "Deleted" }, ...problems(401, 403, 404, 421, 429) },
  },
);

function counts(refs: ReferenceRow[]) {
  const live = refs.filter((r) => r.status === "enrolled");
  return { anchors: live.filter((r) => r.kind === "anchor").length, learned: live.filter((r) => r.kind === "learned").length };
}

function lastCheck(s: SubjectRow) {
  return s.lastCheckId ? { check_id: s.lastCheckId, decision: s.lastCheckDecision, checked_at: s.lastCheckAt! } : null;
}

function referenceRecord(r: ReferenceRow, base: string, review?: ReviewRow) {
  return {
    ref_id: r.refId,
    kind: r.kind,
    // The stored row says `learned`; the spec's sources are the three below, and a learned reference is one
    // of them: a past signature a reviewer confirmed.
    source: r.kind === "learned" ? ("confirmed_past" as const) : (r.source as ReferenceSource),
    status: r.status,
    rejected_reason: r.rejectedReason,
    rejected_detail: r.rejectedDetail,
    outlier: r.outlier === 1,
    provenance: {
      method: r.method,
      source_url: r.sourceUrl,
      learned_from: r.learnedFrom,
      uploaded_at: r.createdAt,
      enrolled_at: r.enrolledAt,
      ...(r.kind === "learned"
        ? { confirmed_by: review?.reviewedBy ?? null, confirmed_at: review?.reviewedAt ?? null, learned_at: r.enrolledAt }
        : {}),
    },
    file: { content_type: r.contentType, byte_size: r.byteSize, sha256: r.sha256 },
    signature:
      r.page !== null && r.box
        ? { page: r.page, box: JSON.parse(r.box), quality: r.quality ? (JSON.parse(r.quality).score ?? null) : null }
        : null,
    image_url: `${base}/sig/subjects/${r.subjectReference}/references/${r.refId}/image`,
    replacement: replacementRecord(r),
  };
}

function replacementRecord(r: ReferenceRow) {
  const p = parseReplacement(r.replacement);
  if (!p) return null;
  return {
    status: p.status,
    source: p.source,
    rejected_reason: p.rejectedReason,
    rejected_detail: p.rejectedDetail,
    uploaded_at: p.createdAt,
    file: { content_type: p.contentType, byte_size: p.byteSize, sha256: p.sha256 },
  };
}

export function registerSubjectRoutes(app: App): void {
  app.openapi(listSubjects, async (c) => {
    const { q, cursor, limit } = c.req.valid("query");
    const tenant = c.get("tenant");
    const after =
      cursor !== undefined
        ? await decodeCursor<{ c: string; s: string; q: string }>(configOf(c.env).cursorSecret, LIST_CURSOR, cursor)
        : null;
    if (after && after.q !== (q ?? "")) {
      // A cursor belongs to one query; reusing it with another q would skip or repeat entries.
      const field = fieldName("query", "cursor");
      throw new ProblemError("invalid_cursor", `${field}: it was issued for another q.`, {
        extensions: { errors: [{ field, message: "was issued for another q" }] },
      });
    }
    const rows = await subjectsRepo(tenant.store.db).list(tenant.org.id, {
      q,
      after: after ? { createdAt: after.c, subjectReference: after.s } : null,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const next =
      rows.length > limit && last
        ? await encodeCursor(configOf(c.env).cursorSecret, LIST_CURSOR, { c: last.createdAt, s: last.subjectReference, q: q ?? "" })
        : null;
    return c.json(
      {
        subjects: page.map((s) => ({
          subject_reference: s.subjectReference,
          created_at: s.createdAt,
          updated_at: s.updatedAt,
          reference_counts: { anchors: s.anchors, learned: s.learned },
          last_check: lastCheck(s),
        })),
        next_cursor: next,
      },
      200,
    );
  });

  app.openapi(getSubject, async (c) => {
    const { subject_reference: subjectReference } = c.req.valid("param");
    const tenant = c.get("tenant");
    const repo = subjectsRepo(tenant.store.db);
    const subject = await repo.get(tenant.org.id, subjectReference);
    if (!subject) throw notFound("subject");
    const refs = await repo.references(tenant.org.id, subjectReference);
    const base = new URL(c.req.url).origin;
    const checks = await recentChecksOf(tenant.store, tenant.org.id, subjectReference, base);
    const reviews = reviewsRepo(tenant.store.db);
    const [byRef, recentReviews] = await Promise.all([
      reviews.forRefs(tenant.org.id, subjectReference),
      reviews.recent(tenant.org.id, subjectReference, 25),
    ]);
    return c.json(
      {
        subject_reference: subject.subjectReference,
        created_at: subject.createdAt,
        updated_at: subject.updatedAt,
        reference_counts: counts(refs),
        forgeability: parseForgeability(subject.forgeability),
        references: refs.map((r) => referenceRecord(r, base, byRef.get(r.refId))),
        checks,
        learning: { recent: recentReviews.map(renderReview) },
      },
      200,
    );
  });

  app.openapi(removeSubject, async (c) => {
    const { subject_reference: subjectReference } = c.req.valid("param");
    const tenant = c.get("tenant");
    if (!(await deleteSubject(tenant.store, tenant.org.id, subjectReference))) throw notFound("subject");
    // Its sessions die with it; open live connections are cut at once rather than at the next re-check.
    await revokeSubjectSessions(c.env, tenant.store, tenant.org.id, subjectReference);
    await recordAudit(tenant.store.db, {
      orgId: tenant.org.id,
      actor: c.get("caller").actor,
      action: "subject.delete",
      target: subjectReference,
      requestId: c.get("requestId"),
    });
    return c.body(null, 204);
  });
}
