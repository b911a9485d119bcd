/**
 * PNG edits at chunk level: IHDR lies (dimensions, depth, colour type, interlace), chunk length lies,
 * dropped, duplicated, swapped and split chunks, damaged row filters under a valid zlib stream, and
 * deflate bombs under a small IHDR. Chunks are re-framed with valid CRCs (the decoder ignores CRCs, so a
 * bad CRC is a separate edit) so the lie reaches the code that believes it.
 */
import { pngChunk } from "../../src/verify/render";
import type { Rng } from "../../test/fixtures/random";
import { concat, interesting32, rd32, wr32 } from "../core/bytes";
import type { Mutator } from "../core/types";
import { deflate, inflateOrNull, zeroBomb } from "../core/zlib";

interface Chunk {
  type: string;
  data: Uint8Array;
}

const SIG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function parse(b: Uint8Array): Chunk[] | null {
  const out: Chunk[] = [];
  let o = 8;
  while (o + 12 <= b.length) {
    const len = rd32(b, o, false);
    if (o + 12 + len > b.length) return null;
    out.push({ type: String.fromCharCode(...b.subarray(o + 4, o + 8)), data: b.subarray(o + 8, o + 8 + len) });
    o += 12 + len;
  }
  return out.length ? out : null;
}

function build(chunks: Chunk[]): Uint8Array {
  return concat([SIG, ...chunks.map((c) => pngChunk(c.type, c.data))]);
}

function withChunks(name: string, f: (cs: Chunk[], r: Rng) => string | null): Mutator {
  return {
    name,
    apply(b, r) {
      const cs = parse(b);
      if (!cs) return null;
      const label = f(cs, r);
      return label === null ? null : { bytes: build(cs), label: `${name}(${label})` };
    },
  };
}

function ihdr(cs: Chunk[]): Chunk | undefined {
  return cs.find((c) => c.type === "IHDR" && c.data.length === 13);
}

/** The joined, inflated IDAT stream, or null. */
function idatRaw(cs: Chunk[]): Uint8Array | null {
  const parts = cs.filter((c) => c.type === "IDAT").map((c) => c.data);
  return parts.length ? inflateOrNull(concat(parts)) : null;
}

function replaceIdat(cs: Chunk[], data: Uint8Array, pieces = 1): void {
  const first = cs.findIndex((c) => c.type === "IDAT");
  const rest = cs.filter((c) => c.type !== "IDAT");
  const step = Math.ceil(data.length / pieces) || 1;
  const idats: Chunk[] = [];
  for (let i = 0; i < data.length || idats.length === 0; i += step) idats.push({ type: "IDAT", data: data.subarray(i, i + step) });
  const at = first < 0 ? rest.length - 1 : first;
  cs.length = 0;
  cs.push(...rest.slice(0, at));
  for (const c of idats) cs.push(c);
  cs.push(...rest.slice(at));
}

export const pngMutators: Mutator[] = [
  withChunks("ihdr-dims", (cs, r) => {
    const h = ihdr(cs);
    if (!h) return null;
    const d = h.data.slice();
    const which = r.int(0, 2);
    const w = which !== 1 ? r.pick(interesting32(rd32(d, 0, false))) : rd32(d, 0, false);
    const ht = which !== 0 ? r.pick(interesting32(rd32(d, 4, false))) : rd32(d, 4, false);
    wr32(d, 0, w, false);
    wr32(d, 4, ht, false);
    h.data = d;
    return `${w >>> 0}x${ht >>> 0}`;
  }),
  withChunks("ihdr-format", (cs, r) => {
    const h = ihdr(cs);
    if (!h) return null;
    const d = h.data.slice();
    const field = r.int(8, 12); // depth, colour type, compression, filter, interlace
    d[field] = r.pick([0, 1, 2, 3, 4, 6, 8, 16, 255, r.int(0, 255)]);
    h.data = d;
    return `byte${field}=${d[field]}`;
  }),
  {
    name: "chunk-length-lie",
    apply(b, r) {
      const cs = parse(b);
      if (!cs) return null;
      const i = r.int(0, cs.length - 1);
      let o = 8;
      for (let k = 0; k < i; k++) o += 12 + cs[k].data.length;
      const out = b.slice();
      const v = r.pick(interesting32(cs[i].data.length));
      wr32(out, o, v, false);
      return { bytes: out, label: `chunk-length-lie(${cs[i].type}=${v >>> 0})` };
    },
  },
  withChunks("chunk-drop", (cs, r) => {
    const i = r.int(0, cs.length - 1);
    return cs.splice(i, 1)[0].type;
  }),
  withChunks("chunk-dup", (cs, r) => {
    const i = r.int(0, cs.length - 1);
    const n = r.pick([1, 2, 100]);
    cs.splice(r.int(0, cs.length), 0, ...Array.from({ length: n }, () => cs[i]));
    return `${cs[i].type}x${n}`;
  }),
  withChunks("chunk-swap", (cs, r) => {
    const i = r.int(0, cs.length - 1),
      j = r.int(0, cs.length - 1);
    [cs[i], cs[j]] = [cs[j], cs[i]];
    return `${cs[i].type}<->${cs[j].type}`;
  }),
  withChunks("idat-split", (cs, r) => {
    const raw = cs.filter((c) => c.type === "IDAT").map((c) => c.data);
    if (!raw.length) return null;
    const z = concat(raw);
    const pieces = r.pick([2, 7, Math.min(z.length, 4096)]);
    replaceIdat(cs, z, pieces);
    return `${pieces}`;
  }),
  withChunks("idat-truncate", (cs, r) => {
    const raw = idatRaw(cs);
    if (!raw) return null;
    const keep = r.int(0, raw.length - 1);
    replaceIdat(cs, deflate(raw.subarray(0, keep)));
    return `${keep}/${raw.length}`;
  }),
  withChunks("row-filter", (cs, r) => {
    // Damage filter-type bytes (and some samples) but keep the zlib stream valid.
    const raw = idatRaw(cs);
    if (!raw) return null;
    const d = raw.slice();
    const n = r.int(1, 6);
    for (let k = 0; k < n; k++) d[r.int(0, d.length - 1)] = r.pick([5, 6, 255, 4, r.int(0, 255)]);
    replaceIdat(cs, deflate(d));
    return `${n}`;
  }),
  withChunks("idat-extra", (cs, r) => {
    // More image data than IHDR declares: the stream must be cut at the declared size.
    const raw = idatRaw(cs);
    if (!raw) return null;
    const times = Math.min(r.pick([2, 16, 300]), Math.max(2, Math.floor((32 << 20) / raw.length)));
    const d = new Uint8Array(raw.length * times);
    for (let k = 0; k < times; k++) d.set(raw, k * raw.length);
    replaceIdat(cs, deflate(d));
    return `x${times}`;
  }),
  withChunks("deflate-bomb", (cs, r) => {
    const size = r.pick([16 << 20, 64 << 20, 256 << 20]);
    if (r.next() < 0.5) {
      const h = ihdr(cs);
      if (h) {
        // A header that honestly declares a huge image, to hit the pixel bound rather than the size check.
        const d = h.data.slice();
        wr32(d, 0, r.pick([8000, 20000, 65535]), false);
        wr32(d, 4, r.pick([8000, 20000, 65535]), false);
        h.data = d;
      }
    }
    replaceIdat(cs, zeroBomb(size));
    return `${size >> 20}MiB`;
  }),
  withChunks("plte-lie", (cs, r) => {
    const i = cs.findIndex((c) => c.type === "PLTE" || c.type === "tRNS");
    const data = new Uint8Array(r.pick([0, 1, 2, 767, 768, 771, 3000])).map((_, k) => k * 37);
    if (i >= 0) cs[i] = { type: cs[i].type, data };
    else cs.splice(1, 0, { type: r.pick(["PLTE", "tRNS"]), data });
    return `${data.length}`;
  }),
  {
    name: "crc-damage",
    apply(b, r) {
      if (b.length < 40) return null;
      const out = b.slice();
      out[29 + r.int(0, 3)] ^= 0xff; // the IHDR CRC
      return { bytes: out, label: "crc-damage" };
    },
  },
];
