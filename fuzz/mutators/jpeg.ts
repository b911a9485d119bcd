/**
 * JPEG edits at segment level: frame header lies (dimensions, component count, sampling factors, table
 * ids, precision, frame type), Huffman and quantisation table damage, scan header lies (components,
 * spectral selection and successive approximation for progressive scans), restart intervals and
 * stray RST markers, and dropped, duplicated, swapped or truncated segments and scans.
 */
import type { Rng } from "../../test/fixtures/random";
import { concat, interesting16, rd16, wr16 } from "../core/bytes";
import type { Mutator } from "../core/types";

interface Segment {
  marker: number;
  /** Bytes after the length field (for SOS: the header only). */
  data: Uint8Array;
  /** For SOS: the entropy-coded data that follows, up to the next marker. */
  entropy?: Uint8Array;
}

const NO_LENGTH = (m: number) => m === 0xd8 || m === 0xd9 || m === 0x01 || (m >= 0xd0 && m <= 0xd7);

function parse(b: Uint8Array): Segment[] | null {
  if (b[0] !== 0xff || b[1] !== 0xd8) return null;
  const out: Segment[] = [];
  let o = 2;
  while (o + 1 < b.length) {
    if (b[o] !== 0xff) return null;
    const m = b[o + 1];
    o += 2;
    if (NO_LENGTH(m)) {
      if (m === 0xd9) break;
      out.push({ marker: m, data: new Uint8Array(0) });
      continue;
    }
    if (o + 2 > b.length) return null;
    const len = rd16(b, o, false);
    if (len < 2 || o + len > b.length) return null;
    const seg: Segment = { marker: m, data: b.subarray(o + 2, o + len) };
    o += len;
    if (m === 0xda) {
      let e = o;
      while (e + 1 < b.length && !(b[e] === 0xff && b[e + 1] !== 0 && !(b[e + 1] >= 0xd0 && b[e + 1] <= 0xd7))) e++;
      seg.entropy = b.subarray(o, e);
      o = e;
    }
    out.push(seg);
  }
  return out;
}

function build(segs: Segment[], eoi = true): Uint8Array {
  const parts: Uint8Array[] = [new Uint8Array([0xff, 0xd8])];
  for (const s of segs) {
    if (NO_LENGTH(s.marker)) {
      parts.push(new Uint8Array([0xff, s.marker]));
      continue;
    }
    const head = new Uint8Array(4);
    head[0] = 0xff;
    head[1] = s.marker;
    wr16(head, 2, Math.min(0xffff, s.data.length + 2), false);
    parts.push(head, s.data);
    if (s.entropy) parts.push(s.entropy);
  }
  if (eoi) parts.push(new Uint8Array([0xff, 0xd9]));
  return concat(parts);
}

const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function withSegments(name: string, f: (segs: Segment[], r: Rng) => string | null): Mutator {
  return {
    name,
    apply(b, r) {
      const segs = parse(b);
      if (!segs) return null;
      const label = f(segs, r);
      return label === null ? null : { bytes: build(segs), label: `${name}(${label})` };
    },
  };
}

/** Sets one byte and returns it, for the edit's label. */
function put(d: Uint8Array, i: number, v: number): number {
  d[i] = v;
  return v;
}

function edit(segs: Segment[], pick: (s: Segment) => boolean, r: Rng, f: (d: Uint8Array) => string | null): string | null {
  const cands = segs.filter(pick);
  if (!cands.length) return null;
  const s = r.pick(cands);
  const d = s.data.slice();
  const label = f(d);
  s.data = d;
  return label;
}

export const jpegMutators: Mutator[] = [
  withSegments("sof-dims", (segs, r) =>
    edit(
      segs,
      (s) => isSof(s.marker) && s.data.length >= 6,
      r,
      (d) => {
        const at = r.pick([1, 3]);
        const v = r.pick(interesting16(rd16(d, at, false)));
        wr16(d, at, v, false);
        return `${at === 1 ? "height" : "width"}=${v}`;
      },
    ),
  ),
  withSegments("sof-components", (segs, r) =>
    edit(
      segs,
      (s) => isSof(s.marker) && s.data.length >= 6,
      r,
      (d) => {
        const which = r.int(0, 3);
        if (which === 0) return `count=${put(d, 5, r.pick([0, 1, 2, 3, 4, 5, 255]))}`;
        if (which === 1) return `precision=${put(d, 0, r.pick([0, 1, 12, 16, 255]))}`;
        const c = 6 + 3 * r.int(0, Math.max(0, Math.floor((d.length - 6) / 3) - 1));
        if (c + 2 >= d.length) return null;
        if (which === 2) return `sampling=${put(d, c + 1, r.pick([0x00, 0x11, 0x22, 0x44, 0x0f, 0xf0, 0xff, 0x41]))}`;
        return `quant-id=${put(d, c + 2, r.pick([1, 3, 4, 255]))}`;
      },
    ),
  ),
  withSegments("sof-type", (segs, r) => {
    const s = segs.find((x) => isSof(x.marker));
    if (!s) return null;
    const from = s.marker;
    s.marker = r.pick([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc9, 0xca, 0xcb]);
    return `${from.toString(16)}->${s.marker.toString(16)}`;
  }),
  withSegments("dht-damage", (segs, r) =>
    edit(
      segs,
      (s) => s.marker === 0xc4 && s.data.length > 17,
      r,
      (d) => {
        const which = r.int(0, 2);
        if (which === 0) return `class-id=${put(d, 0, r.pick([0x02, 0x04, 0x14, 0xff, 0x13]))}`;
        if (which === 1) {
          // Counts that claim more codes than the table holds, or more than a code length allows.
          const i = r.int(1, 16);
          return `count${i}=${put(d, i, r.pick([0, 1, 2, 255, 200]))}`;
        }
        const i = r.int(17, d.length - 1);
        return `symbol@${i}=${put(d, i, r.int(0, 255))}`;
      },
    ),
  ),
  withSegments("dqt-damage", (segs, r) =>
    edit(
      segs,
      (s) => s.marker === 0xdb && s.data.length > 1,
      r,
      (d) => {
        if (r.next() < 0.5) return `pq-tq=${put(d, 0, r.pick([0x10, 0x04, 0xff, 0x13]))}`;
        const i = r.int(1, d.length - 1);
        return `value@${i}=${put(d, i, r.pick([0, 255]))}`;
      },
    ),
  ),
  withSegments("sos-header", (segs, r) =>
    edit(
      segs,
      (s) => s.marker === 0xda && s.data.length >= 4,
      r,
      (d) => {
        const n = d.length;
        const which = r.int(0, 4);
        if (which === 0) return `ns=${put(d, 0, r.pick([0, 2, 3, 4, 5, 255]))}`;
        if (which === 1) return `selector=${put(d, 1, r.pick([0, 2, 7, 255]))}`;
        if (which === 2) return `tables=${put(d, 2, r.pick([0x11, 0x44, 0xff, 0x04, 0x40]))}`;
        // Progressive parameters: start and end of the spectral band, successive approximation.
        if (which === 3) return `ss-se=${put(d, n - 3, r.pick([0, 1, 63, 64, 255]))},${put(d, n - 2, r.pick([0, 5, 63, 64, 255]))}`;
        return `ah-al=${put(d, n - 1, r.pick([0x00, 0x01, 0x10, 0x0d, 0xd0, 0xff, 0x21]))}`;
      },
    ),
  ),
  withSegments("restart", (segs, r) => {
    // A restart interval (possibly 0 or 1) and, or, RST markers dropped into the entropy data.
    const dri = new Uint8Array(2);
    const interval = r.pick([0, 1, 2, 7, 0xffff]);
    wr16(dri, 0, interval, false);
    const at = segs.findIndex((s) => s.marker === 0xda);
    if (at < 0) return null;
    segs.splice(at, 0, { marker: 0xdd, data: dri });
    const scan = segs[at + 1];
    let rst = 0;
    if (scan.entropy && scan.entropy.length > 4 && r.next() < 0.6) {
      const e = Array.from(scan.entropy);
      rst = r.int(1, 8);
      for (let k = 0; k < rst; k++) e.splice(r.int(0, e.length), 0, 0xff, 0xd0 + r.int(0, 7));
      scan.entropy = new Uint8Array(e);
    }
    return `interval=${interval},rst=${rst}`;
  }),
  withSegments("entropy-damage", (segs, r) => {
    const scans = segs.filter((s) => s.entropy && s.entropy.length > 0);
    if (!scans.length) return null;
    const s = r.pick(scans);
    const e = s.entropy!.slice();
    const mode = r.int(0, 2);
    if (mode === 0) {
      const n = r.int(1, 8);
      for (let k = 0; k < n; k++) e[r.int(0, e.length - 1)] ^= 1 << r.int(0, 7);
      s.entropy = e;
      return `flip${n}`;
    }
    if (mode === 1) {
      s.entropy = e.subarray(0, r.int(0, e.length - 1));
      return `truncate`;
    }
    s.entropy = e.fill(r.pick([0x00, 0xff & 0xfe, 0x55]));
    return "fill";
  }),
  withSegments("segment-drop", (segs, r) => {
    const i = r.int(0, segs.length - 1);
    return segs.splice(i, 1)[0].marker.toString(16);
  }),
  withSegments("segment-dup", (segs, r) => {
    // Repeated scans are work amplification for a progressive decoder.
    const i = r.int(0, segs.length - 1);
    const n = r.pick([1, 2, 50, 400]);
    segs.splice(i, 0, ...Array.from({ length: n }, () => segs[i]));
    return `${segs[i].marker.toString(16)}x${n}`;
  }),
  withSegments("segment-swap", (segs, r) => {
    const i = r.int(0, segs.length - 1),
      j = r.int(0, segs.length - 1);
    [segs[i], segs[j]] = [segs[j], segs[i]];
    return `${segs[i].marker.toString(16)}<->${segs[j].marker.toString(16)}`;
  }),
  {
    name: "segment-length-lie",
    apply(b, r) {
      const segs = parse(b);
      if (!segs) return null;
      // Walk to one length field and lie in it, leaving the rest of the file as it is.
      const out = b.slice();
      const lens: number[] = [];
      for (let o = 2; o + 3 < out.length; ) {
        if (out[o] !== 0xff) break;
        const m = out[o + 1];
        if (NO_LENGTH(m)) {
          o += 2;
          continue;
        }
        lens.push(o + 2);
        if (m === 0xda) break;
        o += 2 + rd16(out, o + 2, false);
      }
      if (!lens.length) return null;
      const at = r.pick(lens);
      const v = r.pick([0, 1, 2, 3, 0xffff, rd16(out, at, false) + 1, rd16(out, at, false) - 1]);
      wr16(out, at, v, false);
      return { bytes: out, label: `segment-length-lie(@${at}=${v})` };
    },
  },
  {
    name: "no-eoi",
    apply(b) {
      const segs = parse(b);
      return segs ? { bytes: build(segs, false), label: "no-eoi" } : null;
    },
  },
  withSegments("exif-orientation", (segs, r) => {
    // A minimal Exif APP1 whose orientation (or its IFD offset) is out of range.
    const o = r.pick([0, 5, 8, 9, 255, 0xffff]);
    const ifdOff = r.pick([8, 8, 0xfffffff0]);
    const app1 = new Uint8Array([
      0x45,
      0x78,
      0x69,
      0x66,
      0,
      0,
      0x4d,
      0x4d,
      0,
      0x2a,
      (ifdOff >>> 24) & 255,
      (ifdOff >>> 16) & 255,
      (ifdOff >>> 8) & 255,
      ifdOff & 255,
      0,
      1,
      0x01,
      0x12,
      0,
      3,
      0,
      0,
      0,
      1,
      o >> 8,
      o & 255,
      0,
      0,
      0,
      0,
      0,
      0,
    ]);
    segs.unshift({ marker: 0xe1, data: app1 });
    return `orientation=${o},ifd=${ifdOff}`;
  }),
];
