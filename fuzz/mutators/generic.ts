/** Format-blind edits: bit flips, interesting values over integers, and range inserts, deletes, copies. */
import type { Mutator } from "../core/types";
import { interesting16, interesting32, wr16, wr32 } from "../core/bytes";

/** The part of a file generic edits touch: past the first bytes, so the magic usually still sniffs. */
function pos(len: number, r: { int(a: number, b: number): number }, skip = 8): number {
  return len <= skip ? 0 : r.int(skip, len - 1);
}

export const genericMutators: Mutator[] = [
  {
    name: "bitflip",
    apply(b, r) {
      const out = b.slice();
      const n = r.int(1, 8);
      for (let i = 0; i < n; i++) out[pos(out.length, r)] ^= 1 << r.int(0, 7);
      return { bytes: out, label: `bitflip(${n})` };
    },
  },
  {
    name: "byte-set",
    apply(b, r) {
      const out = b.slice();
      const at = pos(out.length, r);
      const v = r.pick([0, 0xff, 0x7f, 0x80, 0x01, r.int(0, 255)]);
      out[at] = v;
      return { bytes: out, label: `byte-set(@${at}=${v})` };
    },
  },
  {
    name: "int-set",
    apply(b, r) {
      if (b.length < 12) return null;
      const out = b.slice();
      const at = pos(out.length - 4, r);
      const le = r.next() < 0.5;
      if (r.next() < 0.5) {
        const v = r.pick(interesting16(0));
        wr16(out, at, v, le);
        return { bytes: out, label: `int16-set(@${at}=${v})` };
      }
      const v = r.pick(interesting32(0));
      wr32(out, at, v, le);
      return { bytes: out, label: `int32-set(@${at}=${v})` };
    },
  },
  {
    name: "truncate",
    apply(b, r) {
      const at = r.int(Math.min(8, b.length), Math.max(8, b.length - 1));
      return { bytes: b.slice(0, at), label: `truncate(${at}/${b.length})` };
    },
  },
  {
    name: "delete-range",
    apply(b, r) {
      const at = pos(b.length, r);
      const n = Math.min(b.length - at, r.int(1, 512));
      const out = new Uint8Array(b.length - n);
      out.set(b.subarray(0, at));
      out.set(b.subarray(at + n), at);
      return { bytes: out, label: `delete-range(@${at}+${n})` };
    },
  },
  {
    name: "insert-range",
    apply(b, r) {
      const at = pos(b.length, r);
      const n = r.int(1, 512);
      const fill = r.next() < 0.5 ? r.int(0, 255) : -1;
      const ins = new Uint8Array(n).map(() => (fill >= 0 ? fill : r.int(0, 255)));
      const out = new Uint8Array(b.length + n);
      out.set(b.subarray(0, at));
      out.set(ins, at);
      out.set(b.subarray(at), at + n);
      return { bytes: out, label: `insert-range(@${at}+${n})` };
    },
  },
  {
    name: "copy-range",
    apply(b, r) {
      // Overwrite one part of the file with another: duplicated markers and tables in unexpected places.
      const from = pos(b.length, r),
        to = pos(b.length, r);
      const n = Math.min(r.int(4, 256), b.length - from, b.length - to);
      const out = b.slice();
      out.copyWithin(to, from, from + n);
      return { bytes: out, label: `copy-range(${from}->${to}+${n})` };
    },
  },
];
