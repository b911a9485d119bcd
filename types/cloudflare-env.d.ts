// Types the `env` and `exports` of "cloudflare:workers" (used by the tests) with our bindings.
declare namespace Cloudflare {
  interface Env extends import("../src/env").Env {
    TEST_DIRECTORY_MIGRATIONS: import("cloudflare:test").D1Migration[];
    TEST_REGION_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
  interface GlobalProps {
    mainModule: typeof import("../src/index");
  }
}
