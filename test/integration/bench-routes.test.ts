import { expect, it } from "vitest";
import { api, createOrg } from "../helpers/tenant";

// The benchmark routes (src/http/bench-bare.ts) exist only where BENCH_BARE_ROUTE is "1": the test
// configuration, like wrangler.toml, does not set it, so they answer like any unknown route.
it("answers 404 on the benchmark-only routes unless BENCH_BARE_ROUTE is set", async () => {
  const { apiKey } = await createOrg();
  for (const path of ["/__bench/bare", "/sig/__bench/pipeline"]) {
    const res = await api(path, { key: apiKey });
    expect(res.status, path).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe("not_found");
  }
});
