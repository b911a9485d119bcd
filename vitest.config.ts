import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
// The outside world (JWKS, document hosts, webhook receivers) as a real local HTTP server; see the file.
import { startOutsideServer } from "./test/outside/server.mjs";

export default defineConfig(async () => {
  const root = import.meta.dirname;
  const directoryMigrations = await readD1Migrations(path.join(root, "migrations/directory"));
  const regionMigrations = await readD1Migrations(path.join(root, "migrations/region"));
  const outside = await startOutsideServer();

  return {
    test: {
      // Two projects: everything inside workerd, and the browser tests in Node (they start the Worker
      // with wrangler and drive headless Chromium, which cannot run inside workerd).
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_DIRECTORY_MIGRATIONS: directoryMigrations,
                  TEST_REGION_MIGRATIONS: regionMigrations,
                  OPERATOR_TOKEN: "test-operator-token",
                  TEST_OUTSIDE_URL: outside.url,
                  JWKS_URL: `${outside.url}/jwks.json`,
                  // The loopback document host may be fetched over plain http (production allows https only).
                  INSECURE_FETCH_HOSTS: new URL(outside.url).host,
                },
              },
            }),
          ],
          test: {
            name: "workers",
            setupFiles: ["./test/setup/apply-migrations.ts"],
            include: ["test/**/*.test.ts"],
            exclude: ["test/browser/**"],
            testTimeout: 30_000,
            hookTimeout: 60_000,
          },
        },
        {
          test: {
            name: "browser",
            environment: "node",
            include: ["test/browser/**/*.test.ts"],
            testTimeout: 120_000,
            hookTimeout: 180_000,
          },
        },
      ],
    },
  };
});
