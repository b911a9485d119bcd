import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { inboxPrefix } from "../../src/services/inbox";
import { createOrg, type CreatedOrg } from "../helpers/tenant";
import { blankPage, encodePng } from "../fixtures/generator";
import { signaturePng } from "../helpers/signatures";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob } from "../helpers/checks";
import { prepareItems, type ParsedRequest } from "../../src/routes/checks/inputs";
import { liveCheckEngine } from "../../src/services/check-engine-live";
import type { VerificationEngine } from "../../src/services/engine";
import { DECODE_BUDGET_MEGAPIXELS, DecodeBudget } from "../../src/domain/decode-budget";
import { normaliseRequest, type CheckRequest } from "../../src/domain/check-request";
import type { PreparedInput } from "../../src/services/checks";

let org: CreatedOrg;
beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "carol", 31, 3);
});

/** The real engine, with its inspections (each a decode of the first page) counted. */
function countingEngine() {
  const real = liveCheckEngine();
  const counts = { inspect: 0 };
  const engine: VerificationEngine = { ...real, inspect: (bytes) => (counts.inspect++, real.inspect(bytes)) };
  return { engine, counts };
}

/** A parsed multipart request whose parts are `files`, as parseCheckBody makes it (one object per part). */
function parsedOf(request: CheckRequest, files: Record<string, Uint8Array>): ParsedRequest {
  const normal = normaliseRequest(request, true);
  if ("problem" in normal) throw new Error(normal.problem.message);
  const cache = new Map<string, PreparedInput>();
  return {
    request,
    items: normal.items,
    multipart: true,
    load: async (src) => {
      if (!("part" in src)) throw new Error("parts only");
      let got = cache.get(src.part);
      if (!got) cache.set(src.part, (got = { bytes: files[src.part], contentType: "image/png", fileName: `${src.part}.png` }));
      return got;
    },
  };
}

describe("decoding once per request", () => {
  it("inspects a file named by 4 items with 4 references each once", async () => {
    const { engine, counts } = countingEngine();
    const request = { items: Array.from({ length: 4 }, () => ({ file: "doc", references: ["doc", "doc", "doc", "doc"] })) } as CheckRequest;
    const budget = new DecodeBudget();
    const prepared = await prepareItems(engine, parsedOf(request, { doc: signaturePng(31, 1) }), budget);
    expect(prepared).toHaveLength(4);
    expect(prepared.every((p) => p.pages === 1 && p.references.length === 4)).toBe(true);
    expect(counts.inspect).toBe(1);
  });

  it("inspects each distinct file once and charges every use", async () => {
    const { engine, counts } = countingEngine();
    const a = encodePng(blankPage(1000, 500));
    const b = encodePng(blankPage(500, 400));
    const request = {
      items: [
        { file: "a", references: ["b"] },
        { file: "a", references: ["b", "a"] },
      ],
    } as CheckRequest;
    const budget = new DecodeBudget();
    await prepareItems(engine, parsedOf(request, { a, b }), budget);
    expect(counts.inspect).toBe(2);
    // Decoded at the request: a and b once; in the checks: item 0 a and b, item 1 a, b and a.
    expect(budget.spentMegapixels).toBeCloseTo(0.5 + 0.2 + (0.5 + 0.2) + (0.5 + 0.2 + 0.5), 6);
  });
});

describe(`the decoded-pixel budget (${DECODE_BUDGET_MEGAPIXELS} MP per request)`, () => {
  it("refuses 100 items naming one 2 MP image 21 times each with 413 naming the limit", async () => {
    const big = encodePng(blankPage(2000, 1000));
    const items = Array.from({ length: 100 }, () => ({
      file: "doc",
      subject_reference: undefined,
      references: Array.from({ length: 20 }, () => "doc"),
    }));
    const res = await postCheck(org.apiKey, checkForm({ items }, { doc: big }));
    const problem = await expectProblem(res, 413, "too_large");
    expect(problem.limit).toBe("decoded_megapixels");
    expect(problem.limit_megapixels).toBe(DECODE_BUDGET_MEGAPIXELS);
    expect(problem.detail).toContain(`at most ${DECODE_BUDGET_MEGAPIXELS} are decoded per request`);
    expect(problem.errors[0].field).toBe("body.request.items");
  });

  it("stops decoding distinct files once the budget is spent", async () => {
    const { engine, counts } = countingEngine();
    const files: Record<string, Uint8Array> = {};
    const png = encodePng(blankPage(1000, 1000));
    // Distinct parts (each its own object): 1 MP each, charged twice (request + check) -> 2 MP per item.
    for (let i = 0; i < 12; i++) files[`f${i}`] = png;
    const request = { items: Array.from({ length: 12 }, (_, i) => ({ file: `f${i}`, references: [`f${i}`] })) } as CheckRequest;
    // Each item: f_i decoded once (1 MP) and used twice (2 MP) = 3 MP; a 10 MP budget stops at item 4.
    await expect(prepareItems(engine, parsedOf(request, files), new DecodeBudget(10))).rejects.toMatchObject({
      status: 413,
      code: "too_large",
    });
    expect(counts.inspect).toBe(4);
  });

  it("still checks an ordinary request within the budget", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "doc", subject_reference: "carol", input_type: "signature_image" }] }, { doc: signaturePng(31, 5) }),
    );
    expect(res.status, await res.clone().text()).toBe(200);
  });
});

describe("the queue decodes a shared reference once per job", () => {
  it("stores a file named by three items once and keeps one copy of the shared reference features for the job", async () => {
    const jobId = `shared-${crypto.randomUUID().slice(0, 8)}`;
    const items = [0, 1, 2].map(() => ({ file: "doc", references: ["ref", "ref"], input_type: "signature_image" }));
    const res = await postCheck(org.apiKey, checkForm({ job_id: jobId, items }, { doc: signaturePng(31, 7), ref: signaturePng(31, 2) }));
    expect(res.status, await res.clone().text()).toBe(202);
    const job = await waitForJob(org.apiKey, jobId);
    expect(job.status).toBe("completed");

    const keys = (await env.FILES_US.list({ prefix: inboxPrefix(org.orgId, jobId) })).objects.map((o) =>
      o.key.slice(inboxPrefix(org.orgId, jobId).length),
    );
    const stored = keys.filter((k) => !k.includes("/crops/"));
    // One input, one reference, and the reference's features (written by the first item that needed them).
    expect(stored.sort()).toEqual(["items/0/input", "items/0/references/0", "items/0/references/0.features.json"]);
  });
});
