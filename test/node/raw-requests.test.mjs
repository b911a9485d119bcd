import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker } from "./worker.mjs";

// Requests that a fetch client cannot build but a raw HTTP client sends: they must get their answer, not a 500.
let worker;
beforeAll(async () => {
  worker = await startWorker();
});
afterAll(async () => {
  await worker?.stop();
});

describe("a GET or HEAD with a body", () => {
  it("is answered as if it had none (the body is ignored)", async () => {
    const json = { "content-type": "application/json" };
    const health = await worker.raw("GET", "/health", json, "{}");
    expect(health.status, health.body).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: "ok" });

    // Authentication still decides: 401 with its problem document, not 500.
    const anonymous = await worker.raw("GET", "/sig/policies", json, '{"a":1}');
    expect(anonymous.status, anonymous.body).toBe(401);
    expect(JSON.parse(anonymous.body).code).toBe("unauthorized");

    const chunked = await worker.raw("GET", "/health", { "transfer-encoding": "chunked" }, "x");
    expect(chunked.status, chunked.body).toBe(200);

    const head = await worker.raw("HEAD", "/health", json, "{}");
    expect(head.status).toBe(200);

    // The next request on the same Worker is unaffected.
    expect((await worker.fetch("/health")).status).toBe(200);
  });
});
