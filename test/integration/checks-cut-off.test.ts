// A signature that runs out of the page is marked in the check's result (`signatures[].cut_off`): what is
// past the edge is missing from the comparison, so a genuine signature's low score is read for what it
// may be. The mark is the same on every rendering of the result, and the decision is not changed by it.
import { beforeAll, describe, expect, it } from "vitest";
import { createOrg, type CreatedOrg } from "../helpers/tenant";
import { blankPage, encodePng, inkBounds, makeWriter, renderSignature } from "../fixtures/generator";
import { cropRaster } from "../../src/verify/render";
import { checkForm, enrolWriter, postCheck, waitForJob, type CheckResultBody } from "../helpers/checks";

let org: CreatedOrg;
const WRITER = 11;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 3);
});

/** A 1000x700 scan holding one of the writer's signatures (480 px wide) with its left edge at `left`. */
function scanWith(left: number): Uint8Array {
  const sig = renderSignature(makeWriter(WRITER), { variant: 4, width: 480, height: 200 });
  const page = blankPage(1000, 700);
  for (let y = 0; y < sig.height; y++) {
    for (let x = 0; x < sig.width; x++) {
      const px = x + left;
      if (px < page.width) page.data[(y + 250) * page.width + px] = sig.data[y * sig.width + x];
    }
  }
  return encodePng(page);
}

async function check(idem: string, bytes: Uint8Array, inputType: string): Promise<CheckResultBody> {
  const res = await postCheck(
    org.apiKey,
    checkForm({ items: [{ file: "d", subject_reference: "alice", input_type: inputType }] }, { d: bytes }),
    {
      idem,
    },
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe("a signature cut off at the page's edge", () => {
  it("is marked cut_off in the result, and one with a margin is not", async () => {
    const whole = await check("cut-whole", scanWith(260), "scan");
    expect(whole.signatures).toHaveLength(1);
    expect(whole.signatures[0].cut_off).toBe(false);

    // The last 120 px of the signature lie past the right edge.
    const cut = await check("cut-right", scanWith(640), "scan");
    expect(cut.signatures).toHaveLength(1);
    expect(cut.signatures[0].cut_off).toBe(true);
    // It was still compared and decided: the mark explains, it does not decide.
    expect(cut.decision).not.toBeNull();
    expect(cut.signatures[0].box.x + cut.signatures[0].box.w).toBeGreaterThan(1000 - 10);

    // The job's stored result says the same.
    const job = await waitForJob(org.apiKey, "cut-right");
    expect(job.results[0].signatures[0].cut_off).toBe(true);
  });

  it("is never claimed of a bare signature image, which is often cut tight to its ink", async () => {
    // The writer's signature cropped to its ink, with no margin at all.
    const sig = renderSignature(makeWriter(WRITER), { variant: 5, height: 200 });
    const box = inkBounds(sig, 128)!;
    const tight = cropRaster(sig, box);
    const bare = await check("cut-bare", encodePng(tight), "signature_image");
    expect(bare.signatures).toHaveLength(1);
    expect(bare.signatures[0].cut_off).toBe(false);
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(bare.decision);
  });
});
