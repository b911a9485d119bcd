/**
 * TIFF edits at directory level, in place: tag values (dimensions, bit depth, samples, compression,
 * photometric, predictor, fill order, rows per strip, tile size), strip and tile offsets and byte counts
 * (zero, past the end, 0xFFFFFFFF), tag counts and types, directory entry counts, the IFD chain (loops,
 * out of range), dropped and duplicated entries, and bit flips inside strip data (what turned a valid
 * LZW strip into an endless loop).
 */
import type { Rng } from "../../test/fixtures/random";
import { interesting32, rd16, rd32, wr16, wr32 } from "../core/bytes";
import type { Mutator } from "../core/types";

interface Entry {
  at: number;
  tag: number;
  type: number;
  count: number;
  /** Where the values are (inline or at the offset). */
  valueAt: number;
}
interface Ifd {
  at: number;
  entries: Entry[];
}
interface Tiff {
  le: boolean;
  ifds: Ifd[];
}

const SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };

function parse(b: Uint8Array): Tiff | null {
  if (b.length < 8) return null;
  const le = b[0] === 0x49;
  if (!le && b[0] !== 0x4d) return null;
  const ifds: Ifd[] = [];
  let off = rd32(b, 4, le);
  const seen = new Set<number>();
  while (off && off + 2 <= b.length && !seen.has(off) && ifds.length < 8) {
    seen.add(off);
    const n = rd16(b, off, le);
    if (off + 2 + n * 12 + 4 > b.length) break;
    const entries: Entry[] = [];
    for (let i = 0; i < n; i++) {
      const e = off + 2 + i * 12;
      const type = rd16(b, e + 2, le),
        count = rd32(b, e + 4, le);
      const total = (SIZE[type] ?? 1) * count;
      entries.push({ at: e, tag: rd16(b, e, le), type, count, valueAt: total <= 4 ? e + 8 : rd32(b, e + 8, le) });
    }
    ifds.push({ at: off, entries });
    off = rd32(b, off + 2 + n * 12, le);
  }
  return ifds.length ? { le, ifds } : null;
}

function entryOf(t: Tiff, r: Rng, tags: number[]): { e: Entry; ifd: Ifd } | null {
  const cands = t.ifds.flatMap((ifd) => ifd.entries.filter((e) => tags.includes(e.tag)).map((e) => ({ e, ifd })));
  return cands.length ? r.pick(cands) : null;
}

/** Writes value index `i` of an entry (SHORT or LONG), if it lies inside the file. */
function setValue(b: Uint8Array, le: boolean, e: Entry, v: number, i = 0): void {
  const size = SIZE[e.type] ?? 4;
  if (size === 2) wr16(b, e.valueAt + 2 * i, v, le);
  else if (size === 4) wr32(b, e.valueAt + 4 * i, v, le);
  else if (size === 1) b[e.valueAt + i] = v & 255;
}

function getValue(b: Uint8Array, le: boolean, e: Entry, i = 0): number {
  const size = SIZE[e.type] ?? 4;
  if (e.valueAt + (i + 1) * size > b.length) return 0;
  return size === 2 ? rd16(b, e.valueAt + 2 * i, le) : size === 4 ? rd32(b, e.valueAt + 4 * i, le) : b[e.valueAt + i];
}

function inPlace(name: string, f: (out: Uint8Array, t: Tiff, r: Rng) => string | null): Mutator {
  return {
    name,
    apply(b, r) {
      const t = parse(b);
      if (!t) return null;
      const out = b.slice();
      const label = f(out, t, r);
      return label === null ? null : { bytes: out, label: `${name}(${label})` };
    },
  };
}

/** Strip or tile data: [offset, length] pairs of the first page, as the file declares them. */
function blocks(b: Uint8Array, t: Tiff): [number, number][] {
  const es = t.ifds[0].entries;
  const offs = es.find((e) => e.tag === 273 || e.tag === 324);
  const lens = es.find((e) => e.tag === 279 || e.tag === 325);
  if (!offs || !lens) return [];
  const out: [number, number][] = [];
  for (let i = 0; i < Math.min(offs.count, lens.count, 4096); i++) out.push([getValue(b, t.le, offs, i), getValue(b, t.le, lens, i)]);
  return out.filter(([o, l]) => o < b.length && l > 0 && o + l <= b.length);
}

export const COMPRESSIONS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 32773, 32946, 34712, 65535];

export const tiffMutators: Mutator[] = [
  inPlace("dims", (out, t, r) => {
    const hit = entryOf(t, r, [256, 257]);
    if (!hit) return null;
    const v = r.pick(interesting32(getValue(out, t.le, hit.e)));
    setValue(out, t.le, hit.e, v);
    return `${hit.e.tag === 256 ? "width" : "height"}=${v >>> 0}`;
  }),
  inPlace("compression", (out, t, r) => {
    const hit = entryOf(t, r, [259]);
    if (!hit) return null;
    const v = r.pick(COMPRESSIONS);
    setValue(out, t.le, hit.e, v);
    return `${v}`;
  }),
  inPlace("sample-format", (out, t, r) => {
    const hit = entryOf(t, r, [258, 262, 277, 266, 284, 317, 274]);
    if (!hit) return null;
    const v = r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 32, 255, 65535]);
    setValue(out, t.le, hit.e, v);
    return `tag${hit.e.tag}=${v}`;
  }),
  inPlace("rows-per-strip", (out, t, r) => {
    const hit = entryOf(t, r, [278, 322, 323]);
    if (!hit) return null;
    const v = r.pick([0, 1, 3, 15, 17, 0xffff, 0xffffffff, 0x7fffffff]);
    setValue(out, t.le, hit.e, v);
    return `tag${hit.e.tag}=${v >>> 0}`;
  }),
  inPlace("strip-table", (out, t, r) => {
    const hit = entryOf(t, r, [273, 279, 324, 325]);
    if (!hit) return null;
    const i = r.int(0, Math.max(0, Math.min(hit.e.count, 64) - 1));
    const v = r.pick([0, 1, 8, out.length, out.length - 1, out.length + 1, 0x7fffffff, 0xffffffff, getValue(out, t.le, hit.e, i) * 16]);
    setValue(out, t.le, hit.e, v, i);
    return `tag${hit.e.tag}[${i}]=${v >>> 0}`;
  }),
  inPlace("count-lie", (out, t, r) => {
    const ifd = r.pick(t.ifds);
    if (!ifd.entries.length) return null;
    const e = r.pick(ifd.entries);
    const v = r.pick([0, 2, 0xffff, 0x3fffffff, 0xffffffff, e.count + 1]);
    wr32(out, e.at + 4, v, t.le);
    return `tag${e.tag}=${v >>> 0}`;
  }),
  inPlace("type-lie", (out, t, r) => {
    const ifd = r.pick(t.ifds);
    if (!ifd.entries.length) return null;
    const e = r.pick(ifd.entries);
    const v = r.pick([0, 1, 2, 3, 4, 5, 7, 12, 13, 14, 0xffff]);
    wr16(out, e.at + 2, v, t.le);
    return `tag${e.tag}=${v}`;
  }),
  inPlace("entry-count-lie", (out, t, r) => {
    const ifd = r.pick(t.ifds);
    const v = r.pick([0, 1, ifd.entries.length + 1, 0x7fff, 0xffff]);
    wr16(out, ifd.at, v, t.le);
    return `${v}`;
  }),
  inPlace("ifd-chain", (out, t, r) => {
    const ifd = r.pick(t.ifds);
    const nextAt = ifd.at + 2 + ifd.entries.length * 12;
    const v = r.pick([ifd.at, t.ifds[0].at, 8, 0xffffffff, out.length - 2, nextAt]);
    if (r.next() < 0.3) {
      wr32(out, 4, v, t.le); // the header's first-IFD pointer
      return `first=${v >>> 0}`;
    }
    wr32(out, nextAt, v, t.le);
    return `next=${v >>> 0}`;
  }),
  inPlace("entry-drop", (out, t, r) => {
    // Remove one entry: shift the rest up and shorten the count (the next-IFD pointer moves with them).
    const ifd = r.pick(t.ifds);
    if (!ifd.entries.length) return null;
    const i = r.int(0, ifd.entries.length - 1);
    const tag = ifd.entries[i].tag;
    const end = ifd.at + 2 + ifd.entries.length * 12 + 4;
    out.copyWithin(ifd.at + 2 + i * 12, ifd.at + 2 + (i + 1) * 12, end);
    wr16(out, ifd.at, ifd.entries.length - 1, t.le);
    return `tag${tag}`;
  }),
  inPlace("entry-dup", (out, t, r) => {
    // Overwrite one entry with a copy of another (two of one tag, none of the other).
    const ifd = r.pick(t.ifds);
    if (ifd.entries.length < 2) return null;
    const a = r.pick(ifd.entries),
      b = r.pick(ifd.entries);
    out.copyWithin(b.at, a.at, a.at + 12);
    return `tag${a.tag}->tag${b.tag}`;
  }),
  inPlace("strip-data", (out, t, r) => {
    const bl = blocks(out, t);
    if (!bl.length) return null;
    const [o, l] = r.pick(bl);
    const n = r.pick([1, 2, 5, 16]);
    for (let k = 0; k < n; k++) out[o + r.int(0, l - 1)] ^= 1 << r.int(0, 7);
    return `flip${n}`;
  }),
  inPlace("strip-fill", (out, t, r) => {
    // Strip bytes that decompressors find hardest: all 0x80 (PackBits no-op), all 0xFF, all zero.
    const bl = blocks(out, t);
    if (!bl.length) return null;
    const [o, l] = r.pick(bl);
    const v = r.pick([0x00, 0x80, 0xff, 0x81, 0x7f]);
    out.fill(v, o, o + l);
    return `0x${v.toString(16)}`;
  }),
];
