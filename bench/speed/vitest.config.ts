/**
 * The speed benchmark runs inside workerd (the Workers runtime), through the same vitest pool as the
 * tests but as its own project: `npm run bench:speed`. It is not part of `npm test`.
 */
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { awsSdkXmlParser } from "../../test/setup/aws-sdk-xml-plugin";
import { benchHost } from "./bench-host";

const root = path.join(import.meta.dirname, "..", "..");

export default defineConfig(async () => ({
  root,
  plugins: [
    awsSdkXmlParser,
    cloudflareTest({
      wrangler: { configPath: path.join(root, "wrangler.toml") },
      // The drop benchmark runs the whole service: migrated databases and its secrets.
      miniflare: {
        bindings: {
          TEST_DIRECTORY_MIGRATIONS: await readD1Migrations(path.join(root, "migrations/directory")),
          TEST_REGION_MIGRATIONS: await readD1Migrations(path.join(root, "migrations/region")),
          OPERATOR_TOKEN: "bench-operator-token",
          BUCKET_SECRET_KEY: "bench-bucket-secret-key",
          // The bare Hono route the api section compares the API's routes with (src/http/bench-bare.ts).
          BENCH_BARE_ROUTE: "1",
        },
        // CPU time of the workerd process and the development data sets, for the throughput benchmark.
        serviceBindings: { BENCH_HOST: benchHost },
      },
    }),
  ],
  test: {
    include: [
      "bench/speed/speed.workerd.ts",
      "bench/speed/live.workerd.ts",
      "bench/speed/drops.workerd.ts",
      "bench/speed/throughput.workerd.ts",
      "bench/speed/api.workerd.ts",
      "bench/speed/feature-upgrade.workerd.ts",
    ],
    setupFiles: ["test/setup/apply-migrations.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
}));
