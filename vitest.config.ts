import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
// The outside world (JWKS, document hosts, webhook receivers) as a real local HTTP server; see the file.
import { startOutsideServer } from "./test/outside/server.mjs";
import { awsSdkXmlParser } from "./test/setup/aws-sdk-xml-plugin";

export default defineConfig(async () => {
  const root = import.meta.dirname;
  const directoryMigrations = await readD1Migrations(path.join(root, "migrations/directory"));
  const regionMigrations = await readD1Migrations(path.join(root, "migrations/region"));
  const outside = await startOutsideServer();

  return {
    plugins: [
      awsSdkXmlParser,
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_DIRECTORY_MIGRATIONS: directoryMigrations,
            TEST_REGION_MIGRATIONS: regionMigrations,
            OPERATOR_TOKEN: "test-operator-token",
            BUCKET_SECRET_KEY: "test-bucket-secret-key",
            TEST_OUTSIDE_URL: outside.url,
            JWKS_URL: `${outside.url}/jwks.json`,
            // The loopback document host may be fetched over plain http (production allows https only).
            INSECURE_FETCH_HOSTS: new URL(outside.url).host,
          },
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup/apply-migrations.ts"],
      include: ["test/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
});
