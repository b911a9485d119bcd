import { index, integer, sqliteTable, text, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";

// Mirrors migrations/directory/0001_directory.sql (the SQL is what wrangler and the tests apply).

export const orgs = sqliteTable(
  "orgs",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    parentId: text("parent_id").references((): AnySQLiteColumn => orgs.id),
    region: text("region", { enum: ["us", "eu"] }).notNull(),
    movingTo: text("moving_to", { enum: ["us", "eu"] }),
    movingSince: text("moving_since"),
    billing: text("billing", { enum: ["active", "inactive", "canceled", "parent"] }).notNull(),
    pinnedVersion: text("pinned_version").notNull(),
    learning: integer("learning", { mode: "boolean" }).notNull().default(true),
    allowHosts: text("allow_hosts", { mode: "json" }).$type<string[]>().notNull().default([]),
    allowBuckets: text("allow_buckets", { mode: "json" }).$type<string[]>().notNull().default([]),
    monthlyQuota: integer("monthly_quota"),
    inboxTtlSeconds: integer("inbox_ttl_seconds").notNull().default(86400),
    suspended: integer("suspended", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("orgs_parent").on(t.parentId)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    orgId: text("org_id")
      .notNull()
      .references(() => orgs.id),
    name: text("name"),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull(),
    permissions: text("permissions", { mode: "json" }).$type<string[]>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("api_keys_org").on(t.orgId, t.createdAt)],
);

export type OrgRow = typeof orgs.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
