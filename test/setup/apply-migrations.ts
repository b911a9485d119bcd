import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Storage is isolated per test file; applying migrations in the setup file gives each file fresh,
// fully migrated databases, with the same SQL that wrangler applies.
await applyD1Migrations(env.DIRECTORY, env.TEST_DIRECTORY_MIGRATIONS);
await applyD1Migrations(env.DB_US, env.TEST_REGION_MIGRATIONS);
await applyD1Migrations(env.DB_EU, env.TEST_REGION_MIGRATIONS);
