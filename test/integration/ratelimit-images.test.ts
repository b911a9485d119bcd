import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { api, createOrg } from "../helpers/tenant";
import { referencesForm, signaturePng } from "../helpers/signatures";

/** Holds the gate's refill back, so the counts do not depend on how fast this machine is. */
async function holdRefill(orgId: string): Promise<void> {
  await runInDurableObject(tenantGate(env, { id: orgId, region: "us" }), (_i, state) => {
    state.storage.sql.exec("UPDATE buckets SET updated_at = ?", Date.now() + 60_000);
  });
}

it("serves the image routes from their own bucket: they work while the API bucket is empty", async () => {
  const { orgId, apiKey } = await createOrg();
  const put = await api("/sig/subjects/pat/references", {
    method: "PUT",
    key: apiKey,
    body: referencesForm({ p1: signaturePng(21, 0), p2: signaturePng(21, 1) }),
  });
  expect(put.status).toBe(200);
  const check = await api("/sig/checks", {
    method: "POST",
    key: apiKey,
    headers: { "Idempotency-Key": "img-rate-1" },
    body: (() => {
      const f = new FormData();
      f.append("request", JSON.stringify({ items: [{ file: "d", subject_reference: "pat" }] }));
      f.append("d", new Blob([signaturePng(21, 2)], { type: "image/png" }), "d.png");
      return f;
    })(),
  });
  expect(check.status).toBe(200);

  // Empty the API bucket.
  await holdRefill(orgId);
  const burst = await Promise.all(Array.from({ length: 55 }, () => api("/sig/subjects", { key: apiKey })));
  expect(burst.some((r) => r.status === 429)).toBe(true);
  await Promise.all(burst.map((r) => r.body?.cancel()));
  expect((await api("/sig/subjects", { key: apiKey })).status).toBe(429);

  // The image routes still answer: they draw on the image bucket (burst 200).
  const thumbs = await Promise.all(Array.from({ length: 20 }, () => api("/sig/subjects/pat/references/p1/image", { key: apiKey })));
  expect(thumbs.map((r) => r.status)).toEqual(Array(20).fill(200));
  await Promise.all(thumbs.map((r) => r.body?.cancel()));
  const crop = await api("/sig/checks/img-rate-1/items/0/image", { key: apiKey });
  expect(crop.status).toBe(200);
  expect(crop.headers.get("Content-Type")).toBe("image/png");
});
