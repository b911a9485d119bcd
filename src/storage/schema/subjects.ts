import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Mirrors migrations/region/0003_subjects.sql, 0009_forgeability.sql and 0014_reference_replacement.sql. */
export const subjects = sqliteTable(
  "subjects",
  {
    orgId: text("org_id").notNull(),
    subjectReference: text("subject_reference").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    refsRevision: integer("refs_revision").notNull().default(0),
    modelRevision: integer("model_revision"),
    modelKey: text("model_key"),
    lastCheckAt: text("last_check_at"),
    lastCheckId: text("last_check_id"),
    lastCheckDecision: text("last_check_decision"),
    /** JSON in the API's Forgeability shape (migrations/region/0009_forgeability.sql); null when not computed. */
    forgeability: text("forgeability"),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.subjectReference] })],
);

export const subjectReferences = sqliteTable(
  "subject_references",
  {
    orgId: text("org_id").notNull(),
    subjectReference: text("subject_reference").notNull(),
    refId: text("ref_id").notNull(),
    kind: text("kind", { enum: ["anchor", "learned"] }).notNull(),
    source: text("source", { enum: ["signature_card", "confirmed_past", "unverified", "learned"] }).notNull(),
    status: text("status", { enum: ["queued", "enrolled", "rejected"] }).notNull(),
    rejectedReason: text("rejected_reason"),
    rejectedDetail: text("rejected_detail"),
    method: text("method", { enum: ["upload", "url", "learned"] }).notNull(),
    sourceUrl: text("source_url"),
    fileKey: text("file_key").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: integer("byte_size").notNull(),
    sha256: text("sha256").notNull(),
    page: integer("page"),
    box: text("box"),
    quality: text("quality"),
    features: text("features"),
    outlier: integer("outlier").notNull().default(0),
    learnedFrom: text("learned_from"),
    uploadId: text("upload_id").notNull(),
    createdAt: text("created_at").notNull(),
    enrolledAt: text("enrolled_at"),
    /** A queued upload replacing this live reference (JSON, services/enrolment.ts Replacement); 0014. */
    replacement: text("replacement"),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.subjectReference, t.refId] })],
);

export type SubjectRow = typeof subjects.$inferSelect;
export type ReferenceRow = typeof subjectReferences.$inferSelect;
