import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Mirrors migrations/region/0004_checks.sql. */
export const checkJobs = sqliteTable(
  "check_jobs",
  {
    orgId: text("org_id").notNull(),
    jobId: text("job_id").notNull(),
    status: text("status", { enum: ["queued", "running", "completed", "failed", "rejected"] }).notNull(),
    source: text("source", { enum: ["api", "bucket"] })
      .notNull()
      .default("api"),
    mode: text("mode", { enum: ["sync", "queued", "stream"] }).notNull(),
    policy: text("policy").notNull(),
    policySpec: text("policy_spec").notNull(),
    itemCount: integer("item_count").notNull(),
    completedItems: integer("completed_items").notNull().default(0),
    metadata: text("metadata"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    completedAt: text("completed_at"),
    inboxExpiresAt: text("inbox_expires_at").notNull(),
    inboxSweptAt: text("inbox_swept_at"),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.jobId] })],
);

export const checkItems = sqliteTable(
  "check_items",
  {
    orgId: text("org_id").notNull(),
    jobId: text("job_id").notNull(),
    itemIndex: integer("item_index").notNull(),
    state: text("state", { enum: ["pending", "done"] }).notNull(),
    subjectReference: text("subject_reference"),
    reference: text("reference"),
    process: text("process"),
    inputType: text("input_type"),
    fileName: text("file_name"),
    spec: text("spec").notNull(),
    inputKey: text("input_key").notNull(),
    pageCount: integer("page_count"),
    decision: text("decision"),
    score: real("score"),
    billable: integer("billable").notNull().default(0),
    result: text("result"),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.jobId, t.itemIndex] })],
);

export type CheckJobRow = typeof checkJobs.$inferSelect;
export type CheckItemRow = typeof checkItems.$inferSelect;
