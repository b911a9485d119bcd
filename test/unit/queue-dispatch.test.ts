import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { localQueueName } from "../../src/queues/dispatch";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("queue dispatch", () => {
  it("knows a queue by its local name under any deployment prefix", () => {
    expect(localQueueName("countersign-check-items")).toBe("countersign-check-items");
    expect(localQueueName("countersign-staging-check-items")).toBe("countersign-check-items");
    expect(localQueueName("acme-enrolments")).toBe("countersign-enrolments");
    expect(localQueueName("acme-dead-letter")).toBe("countersign-dead-letter");
    expect(localQueueName("acme-learning")).toBe("countersign-learning");
    expect(localQueueName("acme-unknown")).toBe("acme-unknown");
  });

  it("hands a prefixed deployment's check queue to the check consumer, which logs and drops a malformed message", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void lines.push(line));
    const batch = createMessageBatch("countersign-staging-check-items", [
      { id: "malformed-1", timestamp: new Date(), attempts: 1, body: { kind: "not-a-check" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    // A batch no consumer claims is retried as a whole; the check consumer acknowledges what it drops.
    expect(result.retryBatch.retry).toBe(false);
    expect(result.explicitAcks).toEqual(["malformed-1"]);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        level: "error",
        msg: "check queue: malformed message dropped",
        queue: "countersign-staging-check-items",
        message_id: "malformed-1",
        body: { kind: "not-a-check" },
      },
    ]);
  });
});
