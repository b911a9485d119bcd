import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import coreModule from "../../wasm/build/core.wasm";

describe("the Worker", () => {
  it("answers /health with the common headers", async () => {
    const res = await exports.default.fetch("https://api.countersign.localhost/health", {
      headers: { "X-Request-Id": "abc.123" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(res.headers.get("X-Request-Id")).toBe("abc.123");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
  });

  it("answers an unknown route with a 404 problem document", async () => {
    const res = await exports.default.fetch("https://api.countersign.localhost/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("Content-Type")).toContain("application/problem+json");
    const body = (await res.json()) as { code: string };
    expect(body.code).toBe("not_found");
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it("instantiates the SIMD core", async () => {
    const inst = await WebAssembly.instantiate(coreModule, {});
    const core = inst.exports as unknown as {
      alloc(n: number): number;
      l2sq(a: number, b: number, n: number): number;
      memory: WebAssembly.Memory;
    };
    const a = core.alloc(16),
      b = core.alloc(16);
    new Float32Array(core.memory.buffer, a, 4).set([1, 2, 3, 4]);
    new Float32Array(core.memory.buffer, b, 4).set([0, 0, 0, 0]);
    expect(core.l2sq(a, b, 4)).toBe(30);
  });
});
