import { and, asc, desc, eq, lt, or, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { subjectReferences, subjects, type ReferenceRow, type SubjectRow } from "./schema/subjects";

/** Subjects and their references in one region's D1, always scoped by organisation. */
export function subjectsRepo(d1: D1Database) {
  const db = drizzle(d1);
  const scope = (orgId: string, subjectReference: string) =>
    and(eq(subjects.orgId, orgId), eq(subjects.subjectReference, subjectReference));
  const refScope = (orgId: string, subjectReference: string) =>
    and(eq(subjectReferences.orgId, orgId), eq(subjectReferences.subjectReference, subjectReference));

  return {
    async get(orgId: string, subjectReference: string): Promise<SubjectRow | null> {
      const rows = await db.select().from(subjects).where(scope(orgId, subjectReference)).limit(1);
      return rows[0] ?? null;
    },

    async references(orgId: string, subjectReference: string): Promise<ReferenceRow[]> {
      return db
        .select()
        .from(subjectReferences)
        .where(refScope(orgId, subjectReference))
        .orderBy(asc(subjectReferences.createdAt), asc(subjectReferences.refId));
    },

    async reference(orgId: string, subjectReference: string, refId: string): Promise<ReferenceRow | null> {
      const rows = await db
        .select()
        .from(subjectReferences)
        .where(and(refScope(orgId, subjectReference), eq(subjectReferences.refId, refId)))
        .limit(1);
      return rows[0] ?? null;
    },

    /**
     * One page of subjects, newest first. `after` is the last entry of the previous page. Each entry
     * carries its live reference counts.
     */
    async list(
      orgId: string,
      opts: { q?: string; after?: { createdAt: string; subjectReference: string } | null; limit: number },
    ): Promise<(SubjectRow & { anchors: number; learned: number })[]> {
      const conds: (SQL | undefined)[] = [eq(subjects.orgId, orgId)];
      if (opts.q) {
        // Prefix match on the identifier alphabet, which has no LIKE wildcards except `_`; GLOB would
        // treat none of [A-Za-z0-9.-] specially, so compare a range instead of pattern matching.
        conds.push(sql`${subjects.subjectReference} >= ${opts.q} AND ${subjects.subjectReference} < ${opts.q + "\u{10FFFF}"}`);
      }
      if (opts.after) {
        conds.push(
          or(
            lt(subjects.createdAt, opts.after.createdAt),
            and(eq(subjects.createdAt, opts.after.createdAt), lt(subjects.subjectReference, opts.after.subjectReference)),
          ),
        );
      }
      // Written out in full: drizzle renders bare column names inside sql``, which the subquery would
      // resolve against its own table.
      const anchors = sql<number>`(SELECT COUNT(*) FROM subject_references r WHERE r.org_id = subjects.org_id AND r.subject_reference = subjects.subject_reference AND r.status = 'enrolled' AND r.kind = 'anchor')`;
      const learned = sql<number>`(SELECT COUNT(*) FROM subject_references r WHERE r.org_id = subjects.org_id AND r.subject_reference = subjects.subject_reference AND r.status = 'enrolled' AND r.kind = 'learned')`;
      const rows = await db
        .select({ s: subjects, anchors, learned })
        .from(subjects)
        .where(and(...conds))
        .orderBy(desc(subjects.createdAt), desc(subjects.subjectReference))
        .limit(opts.limit);
      return rows.map((r) => ({ ...r.s, anchors: Number(r.anchors), learned: Number(r.learned) }));
    },

    /** Creates the subject if new and bumps its references revision: batch it with the reference writes. */
    touchStatement(orgId: string, subjectReference: string, now: string) {
      return db
        .insert(subjects)
        .values({ orgId, subjectReference, createdAt: now, updatedAt: now, refsRevision: 1 })
        .onConflictDoUpdate({
          target: [subjects.orgId, subjects.subjectReference],
          set: { updatedAt: now, refsRevision: sql`${subjects.refsRevision} + 1` },
        });
    },

    upsertReferenceStatement(row: ReferenceRow) {
      const { orgId: _o, subjectReference: _s, refId: _r, ...rest } = row;
      return db
        .insert(subjectReferences)
        .values(row)
        .onConflictDoUpdate({
          target: [subjectReferences.orgId, subjectReferences.subjectReference, subjectReferences.refId],
          set: rest,
        });
    },

    /** Records a queued upload (JSON) beside the live reference of its ref_id, replacing an earlier one. */
    setReplacementStatement(orgId: string, subjectReference: string, refId: string, replacement: string) {
      return db
        .update(subjectReferences)
        .set({ replacement })
        .where(and(refScope(orgId, subjectReference), eq(subjectReferences.refId, refId)));
    },

    /** Takes back the replacement of one upload (guarded on its id, so a newer one is left alone). */
    clearReplacementStatement(orgId: string, subjectReference: string, refId: string, uploadId: string) {
      return db
        .update(subjectReferences)
        .set({ replacement: null })
        .where(
          and(
            refScope(orgId, subjectReference),
            eq(subjectReferences.refId, refId),
            sql`json_extract(${subjectReferences.replacement}, '$.uploadId') = ${uploadId}`,
          ),
        );
    },

    deleteReferenceStatement(orgId: string, subjectReference: string, refId: string) {
      return db.delete(subjectReferences).where(and(refScope(orgId, subjectReference), eq(subjectReferences.refId, refId)));
    },

    deleteSubjectStatements(orgId: string, subjectReference: string) {
      return [
        db.delete(subjectReferences).where(refScope(orgId, subjectReference)),
        db.delete(subjects).where(scope(orgId, subjectReference)),
      ] as const;
    },

    /** Runs writes atomically (D1 batches are transactions). */
    async batch(statements: Parameters<typeof db.batch>[0]) {
      return db.batch(statements);
    },

    /**
     * Records a stored model, but only if it was built from the current references revision; returns
     * false when the references changed meanwhile (the newer change stores its own model). The forgeability
     * estimate (JSON) goes with the model it was computed from.
     */
    async setModel(
      orgId: string,
      subjectReference: string,
      revision: number,
      key: string,
      forgeability: string | null = null,
    ): Promise<boolean> {
      const res = await db
        .update(subjects)
        .set({ modelKey: key, modelRevision: revision, forgeability })
        .where(and(scope(orgId, subjectReference), eq(subjects.refsRevision, revision)))
        .returning({ k: subjects.modelKey });
      return res.length > 0;
    },

    /** Marks the references of one revision's model as outliers or not. */
    setOutlierStatement(orgId: string, subjectReference: string, refId: string, outlier: boolean) {
      return db
        .update(subjectReferences)
        .set({ outlier: outlier ? 1 : 0 })
        .where(and(refScope(orgId, subjectReference), eq(subjectReferences.refId, refId)));
    },
  };
}

export type SubjectsRepo = ReturnType<typeof subjectsRepo>;
