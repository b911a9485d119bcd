import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { unstable_startWorker } from "wrangler";

/**
 * The Worker as `wrangler dev` runs it (same wrangler.toml, local bindings in a throwaway directory), for
 * tests that must run on Node. Needs the WASM core built (`npm run build:wasm`, which `npm test` runs first).
 * @returns {Promise<{ fetch(path: string, init?: RequestInit): Promise<Response>, stop(): Promise<void> }>}
 */
export async function startWorker() {
  const state = await mkdtemp(path.join(tmpdir(), "countersign-node-test-"));
  const worker = await unstable_startWorker({
    config: "wrangler.toml",
    // The secret a deployment sets with `wrangler secret put` (there is no .dev.vars in a fresh clone).
    bindings: { OPERATOR_TOKEN: { type: "plain_text", value: "node-test-operator-token" } },
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "error", persist: state },
  });
  return {
    fetch: (p, init) => worker.fetch(new URL(p, "http://api.countersign.localhost").href, init),
    stop: async () => {
      await worker.dispose();
      await rm(state, { recursive: true, force: true });
    },
  };
}
