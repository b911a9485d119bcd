import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Mirrors migrations/region/0002_policies.sql: published, immutable policy versions. */
export const policies = sqliteTable(
  "policies",
  {
    orgId: text("org_id").notNull(),
    name: text("name").notNull(),
    version: integer("version").notNull(),
    /** Canonical JSON of the complete PolicySpec. */
    spec: text("spec").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name, t.version] })],
);
