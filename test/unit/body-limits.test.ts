import { OpenAPIHono, z } from "@hono/zod-openapi";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, bodyLimits } from "../../src/http/body";
import type { AppEnv } from "../../src/http/context";
import { ProblemError, isProblemError, renderProblem } from "../../src/http/problem";
import { defineRoute } from "../../src/http/route";

const DOCS = "https://docs.example.test";

/** A stream of `chunks` chunks of `size` bytes, optionally never closing (a stalled upload). */
function slowBody(chunks: number, size: number, { stall = false, delayMs = 0 } = {}): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === chunks) {
        if (stall) return new Promise<void>(() => undefined);
        controller.close();
        return;
      }
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      sent++;
      controller.enqueue(new Uint8Array(size).fill(97));
    },
  });
}

/** The real middleware and route body rules, on a small app with test-sized limits. */
function testApp(opts: { maxBytes: number; deadlineMs: number }) {
  const app = new OpenAPIHono<AppEnv>();
  app.use("*", bodyLimits(opts));
  app.post("/echo-length", async (c) => c.json({ length: (await c.req.arrayBuffer()).byteLength }));
  const small = defineRoute(
    { permission: "none" },
    {
      method: "put",
      path: "/small",
      "x-max-body": 100,
      request: { body: { content: { "application/json": { schema: z.object({ a: z.number() }) } }, required: true } },
      responses: { 200: { description: "ok" } },
    },
  );
  app.openapi(small, (c) => c.json({ got: c.req.valid("json") }, 200));
  app.onError((err, c) => renderProblem(isProblemError(err) ? err : new ProblemError("internal_error", String(err)), DOCS));
  return (path: string, init: RequestInit) => app.request(path, init, { DOCS_URL: DOCS });
}

describe("body limits", () => {
  const request = testApp({ maxBytes: 1000, deadlineMs: 300 });

  it("passes a body within the limit through to the handler intact", async () => {
    const res = await request("/echo-length", { method: "POST", body: slowBody(5, 100), duplex: "half" } as RequestInit);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ length: 500 });
  });

  it("refuses by Content-Length before reading", async () => {
    const res = await request("/echo-length", { method: "POST", body: "x".repeat(1001), headers: { "Content-Length": "1001" } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("too_large");
  });

  it("refuses a streamed body without a length once it passes the limit", async () => {
    const res = await request("/echo-length", { method: "POST", body: slowBody(20, 100), duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(((await res.json()) as { code: string }).code).toBe("too_large");
  });

  it("answers 408 timeout when the body does not arrive in time", async () => {
    const res = await request("/echo-length", { method: "POST", body: slowBody(1, 10, { stall: true }), duplex: "half" } as RequestInit);
    expect(res.status).toBe(408);
    const body = (await res.json()) as { code: string; status: number };
    expect(body).toMatchObject({ code: "timeout", status: 408 });
  });

  it("applies a route's own smaller limit (x-max-body)", async () => {
    const ok = await request("/small", { method: "PUT", body: JSON.stringify({ a: 1 }), headers: { "Content-Type": "application/json" } });
    expect(ok.status).toBe(200);
    const big = JSON.stringify({ a: 1, pad: "x".repeat(200) });
    const declared = await request("/small", { method: "PUT", body: big, headers: { "Content-Type": "application/json" } });
    expect(declared.status).toBe(413);
    const streamed = await request("/small", {
      method: "PUT",
      body: new Blob([big]).stream(),
      headers: { "Content-Type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("answers 415 for a content type the route does not declare", async () => {
    const res = await request("/small", { method: "PUT", body: "a=1", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("unsupported_media_type");
    expect(body.detail).toContain("application/json");
  });

  it("answers 400 naming the body for malformed JSON", async () => {
    const res = await request("/small", { method: "PUT", body: '{"a": 1', headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; errors: { field: string }[] };
    expect(body.code).toBe("invalid_request");
    expect(body.errors[0].field).toBe("body");
  });
});

describe("body limits in the Worker", () => {
  it("refuses a body declared over 51 MB with 413 before reading it", async () => {
    const res = await exports.default.fetch("https://api.countersign.localhost/health", {
      method: "POST",
      body: slowBody(1, 10, { stall: true }),
      headers: { "Content-Length": String(MAX_BODY_BYTES + 1) },
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("too_large");
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
  });
});

/** A body whose reads and cancellation are observable from outside the app. */
function trackedBody(chunks: number, size: number) {
  const seen = { pulls: 0, cancelled: false, drained: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulls === chunks) {
          seen.drained = true;
          controller.close();
          return;
        }
        seen.pulls++;
        controller.enqueue(new Uint8Array(size).fill(97));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { seen, stream };
}

// What a connection needs to serve its next request (seen on `wrangler dev`, where breaking either rule
// made the next request hang or answer 503): a body nobody reads is left untouched for the runtime to
// discard, and a body read in part is read to its end, never cancelled or abandoned half-read.
describe("bodies the handler does not read to the end", () => {
  const app = new OpenAPIHono<AppEnv>();
  app.use("*", bodyLimits({ maxBytes: 1000, deadlineMs: 5_000 }));
  app.post("/refuse", (c) => c.json({ refused: true }, 401));
  app.post("/read-some", async (c) => {
    const reader = c.req.raw.body!.getReader();
    await reader.read();
    reader.releaseLock();
    return c.json({ partial: true }, 400);
  });
  app.post("/echo-length", async (c) => c.json({ length: (await c.req.arrayBuffer()).byteLength }));
  app.onError((err, c) => renderProblem(isProblemError(err) ? err : new ProblemError("internal_error", String(err)), DOCS));
  const send = async (path: string, stream: ReadableStream<Uint8Array>) => {
    const req = new Request(`https://x.test${path}`, { method: "POST", body: stream, duplex: "half" } as RequestInit);
    const res = await app.fetch(req, { DOCS_URL: DOCS });
    await res.arrayBuffer();
    return { res, req };
  };

  it("leaves an unread body untouched (not locked, not read) when the answer needs none of it", async () => {
    const { seen, stream } = trackedBody(10, 100);
    const { res, req } = await send("/refuse", stream);
    expect(res.status).toBe(401);
    expect(req.body!.locked).toBe(false);
    expect(seen.pulls).toBe(0);
    expect(seen.cancelled).toBe(false);
  });

  it("leaves an unread body untouched for an unknown route", async () => {
    const { seen, stream } = trackedBody(10, 100);
    const { res, req } = await send("/unknown", stream);
    expect(res.status).toBe(404);
    expect(req.body!.locked).toBe(false);
    expect(seen.cancelled).toBe(false);
  });

  it("reads a body past its limit to the end before answering 413, without cancelling it", async () => {
    const { seen, stream } = trackedBody(30, 100);
    const { res } = await send("/echo-length", stream);
    expect(res.status).toBe(413);
    expect(seen.drained).toBe(true);
    expect(seen.pulls).toBe(30);
    expect(seen.cancelled).toBe(false);
  });

  it("reads the rest of a body a handler read in part", async () => {
    const { seen, stream } = trackedBody(5, 100);
    const { res } = await send("/read-some", stream);
    expect(res.status).toBe(400);
    expect(seen.drained).toBe(true);
    expect(seen.cancelled).toBe(false);
  });

  it("gives up draining a body past the drain bound by cancelling it", async () => {
    const small = new OpenAPIHono<AppEnv>();
    small.use("*", bodyLimits({ maxBytes: 1000, deadlineMs: 5_000, drainBytes: 2000 }));
    small.post("/echo-length", async (c) => c.json({ length: (await c.req.arrayBuffer()).byteLength }));
    small.onError((err, c) => renderProblem(isProblemError(err) ? err : new ProblemError("internal_error", String(err)), DOCS));
    const { seen, stream } = trackedBody(1000, 100);
    const res = await small.fetch(
      new Request("https://x.test/echo-length", { method: "POST", body: stream, duplex: "half" } as RequestInit),
      { DOCS_URL: DOCS },
    );
    expect(res.status).toBe(413);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulls).toBeLessThan(100);
  });
});
