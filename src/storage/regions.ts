import type { Env } from "../env";
import type { RegionName, RegionStore } from "../domain/tenancy";

/** The storage of one region: its D1 database and its R2 bucket. */
export function regionStore(env: Env, region: RegionName): RegionStore {
  switch (region) {
    case "us":
      return { name: "us", db: env.DB_US, files: env.FILES_US };
    case "eu":
      return { name: "eu", db: env.DB_EU, files: env.FILES_EU };
  }
}

/**
 * Every regional table. Each has an `org_id` column, and moving an organisation copies its rows of each
 * table listed here. A migration that adds a regional table appends it here (parents before children,
 * should foreign keys ever be added).
 */
export const REGIONAL_TABLES: string[] = [
  "audit_log",
  "policies",
  "subjects",
  "subject_references",
  "check_jobs",
  "check_items",
  "webhook_endpoints",
  "webhook_events",
  "webhook_deliveries",
  "webhook_attempts",
  "version_pin_changes",
  "sessions",
  "templates",
  "bucket_keys",
  "bucket_drops",
  "check_reviews",
  "learning_blocks",
];

/** Every R2 object of an organisation lives under this prefix, so a move can copy them all. */
export function orgFilePrefix(orgId: string): string {
  return `orgs/${orgId}/`;
}
