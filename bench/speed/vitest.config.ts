/**
 * The speed benchmark runs inside workerd (the Workers runtime), through the same vitest pool as the
 * tests but as its own project: `npm run bench:speed`. It is not part of `npm test`.
 */
import path from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

const root = path.join(import.meta.dirname, "..", "..");

export default defineConfig({
  root,
  plugins: [cloudflareTest({ wrangler: { configPath: path.join(root, "wrangler.toml") } })],
  test: {
    include: ["bench/speed/speed.workerd.ts", "bench/speed/live.workerd.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
