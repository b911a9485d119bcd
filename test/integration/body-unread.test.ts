import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { api, createOrg } from "../helpers/tenant";

const KB200 = 200 * 1024;

/** 200 KB in 16 KB chunks, sent without a Content-Length (as a chunked upload is). */
function streamed(bytes = KB200): ReadableStream<Uint8Array> {
  let left = bytes;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(16 * 1024, left);
      left -= n;
      controller.enqueue(new Uint8Array(n).fill(0x41));
    },
  });
}

function jsonPad(bytes = KB200): string {
  return JSON.stringify({ pad: "x".repeat(bytes) });
}

/** The answers that must keep coming after bad uploads. */
async function goodRequests(key: string): Promise<void> {
  const health = await api("/health");
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: "ok" });
  const list = await api("/sig/policies", { key });
  expect(list.status).toBe(200);
  const put = await api(`/sig/policies/p-${crypto.randomUUID().slice(0, 8)}`, {
    method: "PUT",
    key,
    json: { thresholds: { accept: 0.8 } },
  });
  expect([200, 201, 400]).toContain(put.status);
  expect(put.headers.get("Content-Type")).toContain("json");
}

describe("bad uploads in a row, then good requests (through the Worker)", () => {
  it("answers each bad 200 KB upload with its problem and every good request after them", async () => {
    const { orgId, apiKey } = await createOrg();
    const form = () => {
      const f = new FormData();
      f.append("r1", new Blob([new Uint8Array(KB200)], { type: "image/png" }), "r1.png");
      return f;
    };
    const bad: [string, () => Promise<Response>, number, string][] = [
      ["401 without a credential", () => api("/sig/checks", { method: "POST", body: form() }), 401, "unauthorized"],
      ["404 unknown route", () => api("/nope", { method: "POST", body: streamed(), duplex: "half" } as never), 404, "not_found"],
      ["404 bad path id", () => api("/sig/subjects/bad%20id!/references", { method: "PUT", key: apiKey, body: form() }), 404, "not_found"],
      ["413 declared", () => api("/sig/policies/p", { method: "PUT", key: apiKey, json: JSON.parse(jsonPad()) }), 413, "too_large"],
      [
        "413 streamed",
        () =>
          api("/sig/policies/p", {
            method: "PUT",
            key: apiKey,
            headers: { "Content-Type": "application/json" },
            body: new Blob([jsonPad()]).stream(),
            duplex: "half",
          } as never),
        413,
        "too_large",
      ],
      [
        "415",
        () =>
          api("/sig/checks", {
            method: "POST",
            key: apiKey,
            headers: { "Content-Type": "text/plain", "Idempotency-Key": "k1" },
            body: streamed(),
            duplex: "half",
          } as never),
        415,
        "unsupported_media_type",
      ],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [name, send, status, code] of bad) {
        const res = await send();
        const body = (await res.json()) as { code: string };
        expect({ name, status: res.status, code: body.code }).toEqual({ name, status, code });
      }
      await goodRequests(apiKey);
    }

    // 429: the bucket is emptied, then a 200 KB upload is refused; the next bucket refill serves again.
    await runInDurableObject(tenantGate(env, { id: orgId, region: "us" }), (_i, state) => {
      state.storage.sql.exec("UPDATE buckets SET tokens = 0, updated_at = ?", Date.now() + 60_000);
    });
    const limited = await api("/sig/subjects/s1/references", { method: "PUT", key: apiKey, body: form() });
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { code: string }).code).toBe("rate_limited");
    const health = await api("/health");
    expect(health.status).toBe(200);
  });
});
