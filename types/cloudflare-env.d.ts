// Types the `env` and `exports` of "cloudflare:workers" (used by the tests) with our bindings.
import type { Env as WorkerEnv } from "../src/env";
import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_DIRECTORY_MIGRATIONS: D1Migration[];
      TEST_REGION_MIGRATIONS: D1Migration[];
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
