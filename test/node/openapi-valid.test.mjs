import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker } from "./worker.mjs";

// The served document, checked against the OpenAPI Initiative's 3.1 schema by a validator that also
// resolves every $ref. It runs on Node because the validator compiles schemas with `new Function`.
let worker;
beforeAll(async () => {
  worker = await startWorker();
});
afterAll(async () => {
  await worker?.stop();
});

describe("the API reference", () => {
  it("GET /openapi.json is valid OpenAPI 3.1", async () => {
    const res = await worker.fetch("/openapi.json");
    expect(res.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(await res.json());
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 4000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("GET /docs renders that document with the pinned Scalar script, without credentials", async () => {
    const res = await worker.fetch("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const html = await res.text();
    expect(html).toContain('"url": "/openapi.json"');
    // An exact version: the page cannot change when Scalar publishes.
    expect(html).toMatch(/<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+"><\/script>/);
  });
});
