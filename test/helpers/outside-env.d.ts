// Bindings that vitest.config.ts adds for tests only.
declare global {
  namespace Cloudflare {
    interface Env {
      /** Base URL of the local outside-world server (test/outside/server.mjs). */
      TEST_OUTSIDE_URL: string;
      /** A loopback address where nothing listens: connections to it are refused. */
      TEST_CLOSED_URL: string;
    }
  }
}
export {};
