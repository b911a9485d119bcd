import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Storage is isolated per test file; applying migrations in the setup file gives each file fresh,
// fully migrated databases, with the same SQL that wrangler applies.
const testEnv = env as unknown as Record<string, unknown>;
await applyD1Migrations(env.DIRECTORY, testEnv.TEST_DIRECTORY_MIGRATIONS as D1Migration[]);
await applyD1Migrations(env.DB_US, testEnv.TEST_REGION_MIGRATIONS as D1Migration[]);
await applyD1Migrations(env.DB_EU, testEnv.TEST_REGION_MIGRATIONS as D1Migration[]);
