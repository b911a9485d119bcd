/** Byte helpers for the mutators: endian-aware reads and writes, ASCII, searching. */
import { concatBytes } from "../../src/util/bytes";

export const concat = concatBytes;
const enc = new TextEncoder();
const dec = new TextDecoder("latin1");

export function ascii(s: string): Uint8Array {
  return enc.encode(s);
}

/** Bytes as a string of one char per byte (latin1), so text-level PDF edits keep binary data intact. */
export function latin1(b: Uint8Array): string {
  return dec.decode(b);
}

export function fromLatin1(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

export function rd16(b: Uint8Array, o: number, le: boolean): number {
  return le ? b[o] | (b[o + 1] << 8) : (b[o] << 8) | b[o + 1];
}
export function rd32(b: Uint8Array, o: number, le: boolean): number {
  const v = le
    ? b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)
    : (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
  return v >>> 0;
}
export function wr16(b: Uint8Array, o: number, v: number, le: boolean): void {
  if (o < 0 || o + 2 > b.length) return;
  b[o + (le ? 0 : 1)] = v & 255;
  b[o + (le ? 1 : 0)] = (v >>> 8) & 255;
}
export function wr32(b: Uint8Array, o: number, v: number, le: boolean): void {
  if (o < 0 || o + 4 > b.length) return;
  for (let i = 0; i < 4; i++) b[o + (le ? i : 3 - i)] = (v >>> (8 * i)) & 255;
}

export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = hay.indexOf(needle[0], from); i !== -1 && i + needle.length <= hay.length; i = hay.indexOf(needle[0], i + 1)) {
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

/** Values that break size arithmetic: zero, one, sign and width boundaries, and "just past" the real value. */
export function interesting32(real: number): number[] {
  return [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x10000,
    0x7fffffff,
    0x80000000,
    0xffffffff,
    real + 1,
    real - 1,
    real * 2,
    real * 256,
  ];
}
export function interesting16(real: number): number[] {
  return [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, (real + 1) & 0xffff, Math.max(0, real - 1), (real * 2) & 0xffff];
}
