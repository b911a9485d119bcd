import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { encodeJpeg, makeWriter, renderForm, signatureBoxes, toPdf } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody } from "../helpers/checks";

let org: CreatedOrg;
const WRITER = 11;
const settings = env as unknown as Record<string, string | undefined>;
const W = 1240;
const H = 1754;
const signedPage = () =>
  encodeJpeg(
    renderForm({ signatures: [{ writer: makeWriter(WRITER), variant: 8, box: signatureBoxes(W, H, 1)[0] }], width: W, height: H, seed: 9 })
      .raster,
    85,
  );
const plainPage = (seed: number) => encodeJpeg(renderForm({ signatures: [], width: W, height: H, seed }).raster, 85);

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 3);
});

describe("documents and targets", () => {
  it("checks a 2-page PDF inline, searching only target.page, and records the page", async () => {
    const pdf = await toPdf([{ jpeg: plainPage(1) }, { jpeg: signedPage() }]);
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "pdf", subject_reference: "alice", input_type: "form", target: { page: 2 } }] }, { pdf }),
    );
    const body = (await res.json()) as CheckResultBody & { pages: number };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.pages).toBe(2);
    expect(body.signatures.length).toBeGreaterThanOrEqual(1);
    expect(body.signatures.every((s) => s.page === 2)).toBe(true);
    expect(body.decision).not.toBeNull();
  });

  it("gives an item error for a target page beyond the document", async () => {
    const pdf = await toPdf([{ jpeg: signedPage() }]);
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "pdf", subject_reference: "alice", target: { page: 5 } }] }, { pdf }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ decision: null, billable: false, errors: [{ code: "page_out_of_range" }] });
  });

  it("queues one item of more than 10 pages (202) and checks every page", async () => {
    const pages = [{ jpeg: signedPage() }, ...Array.from({ length: 10 }, () => ({}))];
    const pdf = await toPdf(pages);
    const res = await postCheck(
      org.apiKey,
      checkForm({ job_id: "long-1", items: [{ file: "pdf", subject_reference: "alice", input_type: "form" }] }, { pdf }),
    );
    expect(res.status).toBe(202);
    const job = await waitForJob(org.apiKey, "long-1");
    expect(job.results[0]).toMatchObject({ pages: 11 });
    expect(job.results[0].decision).not.toBeNull();
  });

  it("checks against the item's own references instead of the subject's", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm(
        { items: [{ file: "doc", references: ["ref-a", "ref-b", "ref-c"] }] },
        { doc: signaturePng(31, 7), "ref-a": signaturePng(31, 0), "ref-b": signaturePng(31, 1), "ref-c": signaturePng(31, 2) },
      ),
    );
    const body = (await res.json()) as CheckResultBody;
    expect(res.status).toBe(200);
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(body.decision);
    expect(["ref-a", "ref-b", "ref-c"]).toContain(body.best_match?.ref_id);
    expect(body.subject_reference).toBeNull();
  });
});

describe("committed outcomes", () => {
  it("replays a 503 busy for the same key and body, and the 202 of a queued job with its Location", async () => {
    const form = () => checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 13) });
    settings.CHECK_CAPACITY = "0";
    try {
      const first = await expectProblem(await postCheck(org.apiKey, form(), { idem: "busy-replay" }), 503, "busy");
      const again = await postCheck(org.apiKey, form(), { idem: "busy-replay" });
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      const replayed = await expectProblem(again, 503, "busy");
      expect(replayed.job_id).toBe(first.job_id);
    } finally {
      delete settings.CHECK_CAPACITY;
    }
    await waitForJob(org.apiKey, "busy-replay");

    const two = () =>
      checkForm(
        {
          items: [
            { file: "d", subject_reference: "alice" },
            { file: "d", subject_reference: "alice" },
          ],
        },
        { d: signaturePng(WRITER, 14) },
      );
    const queued = await postCheck(org.apiKey, two(), { idem: "queued-replay" });
    expect(queued.status).toBe(202);
    const replay = await postCheck(org.apiKey, two(), { idem: "queued-replay" });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.headers.get("Location")).toBe(queued.headers.get("Location"));
    await expectProblem(
      await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 15) }), {
        idem: "queued-replay",
      }),
      409,
      "idempotency_conflict",
    );
    await waitForJob(org.apiKey, "queued-replay");
    expect((await api("/sig/checks/queued-replay", { key: org.apiKey })).status).toBe(200);
  });
});
