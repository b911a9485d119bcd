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

export default defineConfig(async () => {
  const root = import.meta.dirname;
  const directoryMigrations = await readD1Migrations(path.join(root, "migrations/directory"));
  const regionMigrations = await readD1Migrations(path.join(root, "migrations/region"));
  const outside = await startOutsideServer();
  const closedUrl = `http://127.0.0.1:${await closedPort()}`;

  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_DIRECTORY_MIGRATIONS: directoryMigrations,
            TEST_REGION_MIGRATIONS: regionMigrations,
            OPERATOR_TOKEN: "test-operator-token",
            TEST_OUTSIDE_URL: outside.url,
            TEST_CLOSED_URL: closedUrl,
            JWKS_URL: `${outside.url}/jwks.json`,
            // The loopback document host may be fetched over plain http (production allows https only).
            // So may a loopback port that refuses connections (TEST_CLOSED_URL).
            INSECURE_FETCH_HOSTS: `${new URL(outside.url).host},${new URL(closedUrl).host}`,
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
