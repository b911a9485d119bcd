import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { request } from "node:http";
import path from "node:path";
import { unstable_startWorker } from "wrangler";

/**
 * The Worker as `wrangler dev` runs it (same wrangler.toml, local bindings in a throwaway directory), for
 * tests that must run on Node. Needs the WASM core built (`npm run build:wasm`, which `npm test` runs first).
 * `raw` sends what `fetch` refuses to build (a GET with a body), over plain node:http.
 * @returns {Promise<{
 *   fetch(path: string, init?: RequestInit): Promise<Response>,
 *   raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number, headers: import("node:http").IncomingHttpHeaders, body: string }>,
 *   stop(): Promise<void>,
 * }>}
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
    raw: async (method, p, headers, body) => {
      const url = await worker.url;
      return new Promise((resolve, reject) => {
        const req = request(
          // One connection per request: a keep-alive connection is the runtime's business, not the Worker's.
          { host: url.hostname, port: url.port, method, path: p, agent: false, headers: { host: "api.countersign.localhost", ...headers } },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (d) => (text += d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    stop: async () => {
      await worker.dispose();
      await rm(state, { recursive: true, force: true });
    },
  };
}
