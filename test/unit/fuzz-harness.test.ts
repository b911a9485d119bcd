/**
 * The fuzzer's own parts: a valid seed corpus (else mutations start from refusals), cases that are a pure
 * function of seed and index (else --replay and the npm-test subset would drift), and zlib bombs that
 * really inflate to what they claim.
 */
import pako from "pako";
import { describe, expect, it } from "vitest";
import { caseFormat, makeCase } from "../../fuzz/core/cases";
import { FUZZ_FORMATS } from "../../fuzz/core/types";
import { zeroBomb } from "../../fuzz/core/zlib";
import { buildSeeds } from "../../fuzz/seeds/index";
import { decodeDocument } from "../../src/verify/decode";

describe("fuzz harness", () => {
  it("every seed is a valid document of its format, with every variant present", async () => {
    const seeds = await buildSeeds();
    for (const kind of [
      "tiff/lzw",
      "tiff/packbits",
      "tiff/tiles",
      "tiff/g4-strips",
      "jpeg/progressive",
      "pdf/jpeg-objstm",
      "png/rgb16-interlaced",
    ]) {
      expect(seeds.map((s) => s.kind)).toContain(kind);
    }
    for (const s of seeds) {
      // pdf/png-objstm has a blank second page and pdf/hex-a85-chain an unsupported chain: page 0 decodes in both.
      const pages = await decodeDocument(s.bytes).catch(async (err) => {
        expect(["pdf/png-objstm", "pdf/hex-a85-chain"], `${s.kind}: ${err}`).toContain(s.kind);
        return [];
      });
      if (pages.length) expect(pages[0].width * pages[0].height, s.kind).toBeGreaterThan(0);
    }
  });

  it("a case is a function of the run seed and its index", async () => {
    const seeds = await buildSeeds();
    for (const i of [0, 1, 17, 503]) {
      const a = makeCase(seeds, 9, i, FUZZ_FORMATS);
      const b = makeCase(seeds, 9, i, FUZZ_FORMATS);
      expect(a.format).toBe(caseFormat(9, i, FUZZ_FORMATS));
      expect(b.mutations).toEqual(a.mutations);
      expect(b.bytes).toEqual(a.bytes);
      expect(b.http?.body).toEqual(a.http?.body);
    }
    expect(makeCase(seeds, 10, 17, FUZZ_FORMATS).bytes).not.toEqual(makeCase(seeds, 9, 17, FUZZ_FORMATS).bytes);
  });

  it("a zlib bomb inflates to exactly its size in zeros, with a valid checksum", () => {
    const bomb = zeroBomb(48 << 20);
    expect(bomb.length).toBeLessThan(100_000);
    let total = 0;
    let nonZero = 0;
    const inf = new pako.Inflate({ chunkSize: 1 << 16 });
    inf.onData = (c) => {
      total += c.length;
      for (const v of c) if (v) nonZero++;
    };
    inf.push(bomb, true);
    expect([inf.err, inf.ended, total, nonZero]).toEqual([0, true, 48 << 20, 0]);
  });
});
