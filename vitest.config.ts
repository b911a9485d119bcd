import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
// The outside world (JWKS, document hosts, webhook receivers) as a real local HTTP server; see the file.
import { startOutsideServer } from "./test/outside/server.mjs";
import net from "node:net";

/** A loopback port nothing listens on (bound, then closed): an allowlisted host that refuses connections. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
import { awsSdkXmlParser } from "./test/setup/aws-sdk-xml-plugin";

export default defineConfig(async () => {
  const root = import.meta.dirname;
  const directoryMigrations = await readD1Migrations(path.join(root, "migrations/directory"));
  const regionMigrations = await readD1Migrations(path.join(root, "migrations/region"));
  const outside = await startOutsideServer();
  const closedUrl = `http://127.0.0.1:${await closedPort()}`;

  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Three projects: everything inside workerd; Node-side checks (test/node); and the browser tests (test/browser),
      // which start the Worker with wrangler and drive headless Chromium, which cannot run inside workerd.
      projects: [
        {
          extends: true,
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
                  TEST_CLOSED_URL: closedUrl,
                  JWKS_URL: `${outside.url}/jwks.json`,
                  // The loopback document host may be fetched over plain http (production allows https only).
                  // So may a loopback port that refuses connections (TEST_CLOSED_URL).
                  INSECURE_FETCH_HOSTS: `${new URL(outside.url).host},${new URL(closedUrl).host}`,
                  // Webhooks may reach the loopback receiver; a short retry schedule (3 attempts at once) and
                  // disabling at the first finally failed delivery, so tests see the whole lifecycle.
                  WEBHOOK_DEV_HOSTS: new URL(outside.url).host,
                  WEBHOOK_RETRY_SCHEDULE: "0,0",
                  WEBHOOK_DISABLE_AFTER_SECONDS: "0",
                  WEBHOOK_ATTEMPT_TIMEOUT_MS: "5000",
                },
              },
            }),
          ],
          test: {
            name: "workers",
            setupFiles: ["./test/setup/apply-migrations.ts"],
            include: ["test/**/*.test.ts"],
            exclude: ["test/node/**", "test/browser/**"],
          },
        },
        {
          // Tooling that runs on Node rather than in the Worker: the deploy script's planning, and checks that
          // need Node-only libraries (the OpenAPI validator compiles schemas with `new Function`, which
          // workerd forbids). These start the Worker with wrangler when they need it.
          extends: true,
          test: { name: "node", environment: "node", include: ["test/node/**/*.test.mjs"] },
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
