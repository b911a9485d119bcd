import { afterEach, describe, expect, it, vi } from "vitest";
import { logError, logInfo, withLogContext } from "../../src/util/log";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("structured logs", () => {
  it("adds the context's fields to every line logged inside it, across awaits", async () => {
    const out: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void out.push(line));
    await withLogContext({ request_id: "req_ctx" }, async () => {
      await Promise.resolve();
      await new Promise((r) => queueMicrotask(() => r(undefined)));
      logInfo("inner", { job_id: "j1" });
    });
    logInfo("outside");
    expect(out.map((l) => JSON.parse(l))).toEqual([
      { level: "info", msg: "inner", request_id: "req_ctx", job_id: "j1" },
      { level: "info", msg: "outside" },
    ]);
  });

  it("writes an error as one JSON line on console.error with its name, message and stack", () => {
    const out: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void out.push(line));
    withLogContext({ request_id: "req_err" }, () => logError("store failed", new TypeError("bad bucket"), { job_id: "j2" }));
    logError("odd throw", "a string");
    const [first, second] = out.map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: "error",
      msg: "store failed",
      request_id: "req_err",
      job_id: "j2",
      error: { name: "TypeError", message: "bad bucket" },
    });
    expect(first.error.stack).toContain("bad bucket");
    expect(second).toEqual({ level: "error", msg: "odd throw", error: { message: "a string" } });
  });
});
