import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { decodePage } from "../../src/verify/decode";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { blankPage, encodePng, makeWriter, renderForm, signatureBoxes } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck, type CheckResultBody } from "../helpers/checks";
import { signaturePng } from "../helpers/signatures";

let org: CreatedOrg;
let other: CreatedOrg;
let form: CheckResultBody;

beforeAll(async () => {
  org = await createOrg({ inboxTtlSeconds: 3600 });
  other = await createOrg();
  await enrolWriter(org.apiKey, "alice", 11, 3);
  const W = 1240;
  const H = 1754;
  const page = renderForm({
    signatures: [{ writer: makeWriter(11), variant: 4, box: signatureBoxes(W, H, 1)[0] }],
    width: W,
    height: H,
    seed: 5,
  });
  const res = await postCheck(
    org.apiKey,
    checkForm({ items: [{ file: "f", subject_reference: "alice", input_type: "form" }] }, { f: encodePng(page.raster) }),
    { idem: "img-1" },
  );
  expect(res.status).toBe(200);
  form = await res.json();
});

async function r2Keys(prefix: string): Promise<string[]> {
  return (await env.FILES_US.list({ prefix })).objects.map((o) => o.key);
}

describe("GET /sig/checks/{job_id}/items/{index}/image", () => {
  it("returns a grey PNG crop of the best match with 8% padding, at most 640 px, and its headers", async () => {
    expect(form.signatures.length).toBeGreaterThanOrEqual(1);
    const res = await api("/sig/checks/img-1/items/0/image", { key: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.headers.get("Cache-Control")).toBe("private, no-store");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const png = await decodePage(new Uint8Array(await res.arrayBuffer()), 0);
    const sig = form.signatures.find((s) => s.index === (form.best_match?.signature_index ?? 0))!;
    const padded = { w: sig.box.w * 1.16, h: sig.box.h * 1.16 };
    const scale = Math.min(1, 640 / Math.max(padded.w, padded.h));
    expect(Math.max(png.width, png.height)).toBeLessThanOrEqual(640);
    expect(png.width).toBeCloseTo(padded.w * scale, -1);
    expect(png.height).toBeCloseTo(padded.h * scale, -1);
    // The crop is kept beside the input in the job's inbox.
    const keys = await r2Keys(`orgs/${org.orgId}/inbox/img-1/`);
    expect(keys).toContain(`orgs/${org.orgId}/inbox/img-1/items/0/input`);
    expect(keys.some((k) => k.includes("/crops/"))).toBe(true);
  });

  it("selects a signature by index, and answers 404 for an unknown one or an item without a signature", async () => {
    const first = form.signatures[0];
    expect((await api(`/sig/checks/img-1/items/0/image?signature=${first.index}`, { key: org.apiKey })).status).toBe(200);
    await expectProblem(await api("/sig/checks/img-1/items/0/image?signature=99", { key: org.apiKey }), 404, "not_found");
    await expectProblem(await api("/sig/checks/img-1/items/7/image", { key: org.apiKey }), 404, "not_found");
    expect((await api("/sig/checks/img-1/items/0/image?signature=-1", { key: org.apiKey })).status).toBe(400);
    // An empty or non-decimal index is not signature 0 (nor the default): 400 naming signature.
    for (const q of ["", "%20", "1e0", "0x0", "0.0"]) {
      const problem = await expectProblem(await api(`/sig/checks/img-1/items/0/image?signature=${q}`, { key: org.apiKey }), 400);
      expect(problem.errors?.[0]?.field, q).toBe("query.signature");
    }

    const blank = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "b", subject_reference: "alice" }] }, { b: encodePng(blankPage(800, 600)) }),
      { idem: "img-blank" },
    );
    expect(((await blank.json()) as CheckResultBody).decision).toBe("NO_SIGNATURE");
    const problem = await expectProblem(await api("/sig/checks/img-blank/items/0/image", { key: org.apiKey }), 404, "not_found");
    expect(problem.detail).toContain("no located signature");
  });

  it("answers another tenant's job as 404", async () => {
    await expectProblem(await api("/sig/checks/img-1/items/0/image", { key: other.apiKey }), 404, "not_found");
    await expectProblem(await api("/sig/checks/img-1", { key: other.apiKey }), 404, "not_found");
  });

  it("expires the inbox after inbox_ttl: the sweep deletes inputs and crops, and the image is 404 saying so", async () => {
    const res = await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 6) }), {
      idem: "img-expire",
    });
    expect(res.status).toBe(200);
    expect(await r2Keys(`orgs/${org.orgId}/inbox/img-expire/`)).not.toEqual([]);

    // A sweep before the TTL keeps everything.
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() + 60_000 }), env, createExecutionContext());
    expect(await r2Keys(`orgs/${org.orgId}/inbox/img-expire/`)).not.toEqual([]);
    expect((await api("/sig/checks/img-expire/items/0/image", { key: org.apiKey })).status).toBe(200);

    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() + 3_700_000 }), env, createExecutionContext());
    expect(await r2Keys(`orgs/${org.orgId}/inbox/img-expire/`)).toEqual([]);
    expect(await r2Keys(`orgs/${org.orgId}/inbox/img-1/`)).toEqual([]);
    const problem = await expectProblem(await api("/sig/checks/img-expire/items/0/image", { key: org.apiKey }), 404, "not_found");
    expect(problem.detail).toContain("expired");
    // The results outlive the inbox.
    const job = (await (await api("/sig/checks/img-expire", { key: org.apiKey })).json()) as { results: CheckResultBody[] };
    expect(job.results).toHaveLength(1);
  });
});
