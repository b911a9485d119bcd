// Hostile documents through the Worker: each decoder refusal reaches the caller as its documented status
// (415 for a format we do not take, 422 naming the reason for a damaged file or a bomb), and the service
// keeps answering afterwards.
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createOrg, type CreatedOrg } from "../helpers/tenant";
import { checkForm, enrolWriter, expectProblem, postCheck } from "../helpers/checks";
import { encodeJpeg, toPdf } from "../fixtures/generator";
import { concat, zlib } from "../unit/decode-files";
import { greyCard, lzwCodes, packBits, streamObject, tiffWith, withObjects } from "../unit/decode-bomb-files";

let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", 11, 3);
});

const check = (bytes: Uint8Array) => postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: bytes }));

describe("hostile documents on POST /sig/checks", () => {
  it("answers 422 for bombs and lying tables, 415 for CCITT 1D/G3 TIFFs, and stays up", async () => {
    const card = greyCard(120, 116);
    const lzwLoop = lzwCodes([256, 65, 259, 66, 259, 257]);
    const base = await toPdf([{ jpeg: encodeJpeg({ width: 64, height: 48, data: greyCard(64, 48) }, 80) }]);
    const objStmBomb = withObjects(
      base,
      streamObject(
        99,
        "/Type /Obj#53tm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]",
        await zlib(await zlib(new Uint8Array(32 * 1024 * 1024))),
      ),
    );

    const cases: [string, Uint8Array, number, string?][] = [
      ["PDF object-stream bomb behind a hex-escaped name and a filter chain", objStmBomb, 422, "too_many_pixels"],
      [
        "PackBits TIFF whose strip byte count is 0xFFFFFFFF",
        tiffWith({ width: 120, height: 116, compression: 32773, strips: [packBits(card)], byteCounts: [0xffffffff] }),
        422,
        "corrupt_file",
      ],
      [
        "LZW TIFF whose codes made utif2 loop",
        tiffWith({ width: 120, height: 116, compression: 5, strips: [concat([lzwLoop, new Uint8Array(13_900)])] }),
        422,
        "corrupt_file",
      ],
      ["CCITT Group 3 TIFF", tiffWith({ width: 120, height: 116, compression: 3, strips: [card], bitsPerSample: 1, photometric: 0 }), 415],
    ];
    for (const [what, bytes, status, reason] of cases) {
      const problem = await expectProblem(await check(bytes), status);
      if (reason) expect(problem.reason, what).toBe(reason);
      expect(problem.detail, what).toContain("body.request.items.0.file");
    }
    const health = await exports.default.fetch("https://api.countersign.localhost/health");
    expect(health.status).toBe(200);
  });
});
