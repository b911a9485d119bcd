/**
 * PDF edits at object level, on the file as latin1 text so binary stream data survives: filter chains
 * put in front of a stream (ASCIIHex, ASCII85, Flate in any order, the data encoded to match), Flate
 * bombs behind such chains in image streams and in object streams, hex-escaped names (/Obj#53tm),
 * object-stream header lies (/N, /First) and damage inside them, dictionary number lies (/Width,
 * /Length, /Count...), /Kids loops, dropped and duplicated objects, and xref damage (table offsets,
 * startxref, trailer, xref-stream /W and /Index, /Prev loops).
 */
import type { Rng } from "../../test/fixtures/random";
import { fromLatin1, latin1 } from "../core/bytes";
import type { Mutator } from "../core/types";
import { deflate, inflateOrNull, zeroBomb } from "../core/zlib";
import { pdfEncoders } from "../seeds/index";

interface Obj {
  num: number;
  start: number;
  end: number;
  /** The dictionary text (between "obj" and "stream"/"endobj"). */
  dict: string;
  dictAt: number;
  stream?: { at: number; end: number };
}

function objects(s: string): Obj[] {
  const out: Obj[] = [];
  const re = /(\d+)\s+(\d+)\s+obj\b/g;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    const start = m.index;
    const bodyAt = m.index + m[0].length;
    let end = s.indexOf("endobj", bodyAt);
    if (end < 0) end = s.length;
    const kw = s.indexOf("stream", bodyAt);
    const obj: Obj = { num: Number(m[1]), start, end: Math.min(s.length, end + 6), dict: "", dictAt: bodyAt };
    if (kw >= 0 && kw < end && s.slice(kw - 3, kw) !== "end") {
      let at = kw + 6;
      if (s[at] === "\r") at++;
      if (s[at] === "\n") at++;
      let se = s.indexOf("endstream", at);
      if (se < 0) se = end;
      let dataEnd = se;
      if (s[dataEnd - 1] === "\n") dataEnd--;
      if (s[dataEnd - 1] === "\r") dataEnd--;
      obj.stream = { at, end: dataEnd };
      obj.dict = s.slice(bodyAt, kw);
    } else obj.dict = s.slice(bodyAt, end);
    out.push(obj);
    re.lastIndex = obj.end;
  }
  return out;
}

const FILTER_RE = /\/Filter\s*(\[[^\]]*\]|\/[^\s/[\]<>()]+)/;
const PARMS_RE = /\/DecodeParms\s*(<<(?:[^<>]|<<[^<>]*>>)*>>|\[[^\]]*\])/;
const LENGTH_RE = /\/Length\s+\d+(\s+\d+\s+R)?/;

/** The stream's object rewritten with a new dictionary body and data; /Length follows the data. */
function rewriteStream(s: string, o: Obj, dict: string, data: Uint8Array): string {
  const d = LENGTH_RE.test(dict) ? dict.replace(LENGTH_RE, `/Length ${data.length}`) : dict.replace(/<</, `<< /Length ${data.length}`);
  return s.slice(0, o.dictAt) + d + "stream\n" + latin1(data) + "\nendstream\nendobj" + s.slice(o.end);
}

type Enc = "ASCIIHexDecode" | "ASCII85Decode" | "FlateDecode";
const ENCODE: Record<Enc, (b: Uint8Array) => Uint8Array> = {
  ASCIIHexDecode: pdfEncoders.hex,
  ASCII85Decode: pdfEncoders.ascii85,
  FlateDecode: (b) => deflate(b),
};

/**
 * Puts `extra` filters in front of the stream's own (the first listed is undone first), encoding the data
 * so the chain still decodes to what it did: only the chain is new.
 */
function chainFilters(dict: string, data: Uint8Array, extra: Enc[]): { dict: string; data: Uint8Array } {
  const fm = FILTER_RE.exec(dict);
  const own = fm ? (fm[1].startsWith("[") ? fm[1].slice(1, -1).trim().split(/\s+/).filter(Boolean) : [fm[1]]) : [];
  const pm = PARMS_RE.exec(dict);
  let out = data;
  for (let i = extra.length - 1; i >= 0; i--) out = ENCODE[extra[i]](out);
  const names = [...extra.map((e) => `/${e}`), ...own];
  let d = dict.replace(FILTER_RE, "").replace(PARMS_RE, "");
  const parms = pm ? ` /DecodeParms [${"null ".repeat(extra.length)}${pm[1].startsWith("[") ? pm[1].slice(1, -1) : pm[1]}]` : "";
  d = d.replace(/<</, `<< /Filter [${names.join(" ")}]${parms}`);
  return { dict: d, data: out };
}

function textMutator(name: string, f: (s: string, objs: Obj[], r: Rng) => { s: string; label: string } | null): Mutator {
  return {
    name,
    apply(b, r) {
      const s = latin1(b);
      const got = f(s, objects(s), r);
      return got ? { bytes: fromLatin1(got.s), label: `${name}(${got.label})` } : null;
    },
  };
}

const streams = (objs: Obj[]) => objs.filter((o) => o.stream);
const isObjStm = (o: Obj) => /\/Type\s*\/ObjStm/.test(o.dict);
const isImage = (o: Obj) => /\/Subtype\s*\/Image/.test(o.dict);

function pickChain(r: Rng): Enc[] {
  const all: Enc[] = ["ASCIIHexDecode", "ASCII85Decode", "FlateDecode"];
  return Array.from({ length: r.int(1, 3) }, () => r.pick(all));
}

/** Escapes one or more letters of a name as #xx, which is the same name to a conforming reader. */
function escapeName(n: string, r: Rng): string {
  const chars = n.split("");
  const k = r.int(0, chars.length - 1);
  chars[k] = "#" + chars[k].charCodeAt(0).toString(16).padStart(2, "0");
  return chars.join("");
}

const BOMB_SIZES = [64 << 20, 256 << 20, 1024 << 20];

export const pdfMutators: Mutator[] = [
  textMutator("filter-chain", (s, objs, r) => {
    const cands = streams(objs);
    if (!cands.length) return null;
    const o = r.pick(cands);
    const chain = pickChain(r);
    const got = chainFilters(o.dict, fromLatin1(s.slice(o.stream!.at, o.stream!.end)), chain);
    return { s: rewriteStream(s, o, got.dict, got.data), label: `obj${o.num}:${chain.join(",")}` };
  }),
  textMutator("image-bomb", (s, objs, r) => {
    const cands = streams(objs).filter(isImage);
    if (!cands.length) return null;
    const o = r.pick(cands);
    const size = r.pick(BOMB_SIZES);
    // The bomb's Flate stage sits last (the image's own filter), with other stages in front of it.
    let dict = o.dict.replace(FILTER_RE, "").replace(PARMS_RE, "").replace(/<</, "<< /Filter /FlateDecode");
    dict = dict.replace(/\/BitsPerComponent\s+\d+/, "/BitsPerComponent 8");
    const chain = r.next() < 0.3 ? [] : pickChain(r);
    const got = chainFilters(dict, zeroBomb(size), chain);
    return { s: rewriteStream(s, o, got.dict, got.data), label: `obj${o.num}:${size >> 20}MiB:${[...chain, "FlateDecode"].join(",")}` };
  }),
  textMutator("objstm-bomb", (s, objs, r) => {
    // The attacks on the structure guard: a bomb in an object stream behind a chain, a double Flate, or
    // a type name spelled with a hex escape.
    const cands = streams(objs).filter(isObjStm);
    const any = streams(objs);
    if (!any.length) return null;
    // Without an object stream, one of the file's streams is turned into one.
    const o = r.pick(cands.length ? cands : any);
    const size = r.pick(BOMB_SIZES);
    const mode = r.int(0, 3);
    let dict = o.dict.replace(FILTER_RE, "").replace(PARMS_RE, "");
    if (!isObjStm(o)) dict = dict.replace(/<</, "<< /Type /ObjStm /N 1 /First 4");
    dict = dict.replace(/<</, "<< /Filter /FlateDecode");
    let data = zeroBomb(size);
    let label: string;
    if (mode === 0) {
      const chain = pickChain(r).filter((e) => e !== "FlateDecode");
      const got = chainFilters(dict, data, chain.length ? chain : ["ASCIIHexDecode"]);
      dict = got.dict;
      data = got.data;
      label = "chain";
    } else if (mode === 1) {
      const got = chainFilters(dict, data, ["FlateDecode"]);
      dict = got.dict;
      data = got.data;
      label = "double-flate";
    } else if (mode === 2) {
      dict = dict.replace(/\/ObjStm/, "/" + escapeName("ObjStm", r));
      label = "escaped-type";
    } else {
      dict = dict.replace(/\/FlateDecode/, "/" + escapeName("FlateDecode", r));
      label = "escaped-filter";
    }
    return { s: rewriteStream(s, o, dict, data), label: `obj${o.num}:${size >> 20}MiB:${label}` };
  }),
  textMutator("objstm-inner", (s, objs, r) => {
    // Damage the objects inside an object stream: number lies, a /Kids loop, dropped offsets.
    const cands = streams(objs).filter((o) => isObjStm(o) && /\/FlateDecode/.test(o.dict));
    if (!cands.length) return null;
    const o = r.pick(cands);
    const raw = inflateOrNull(fromLatin1(s.slice(o.stream!.at, o.stream!.end)));
    if (!raw) return null;
    const inner = latin1(raw);
    const hit = mutateNumbers(inner, r) ?? { s: inner.replace(/\/Kids\s*\[[^\]]*\]/, `/Kids [${o.num} 0 R]`), label: "kids" };
    let dict = o.dict;
    if (r.next() < 0.3) {
      const key = r.pick(["N", "First"]);
      const v = r.pick([0, 1, 1000000, -1, 2147483647]);
      dict = dict.replace(new RegExp(`/${key}\\s+\\d+`), `/${key} ${v}`);
      hit.label += `,${key}=${v}`;
    }
    return { s: rewriteStream(s, o, dict, deflate(fromLatin1(hit.s))), label: `obj${o.num}:${hit.label}` };
  }),
  textMutator("name-escape", (s, _objs, r) => {
    const names = ["ObjStm", "FlateDecode", "Filter", "Type", "XObject", "Image", "Length", "Pages", "Kids", "DCTDecode", "XRef", "Width"];
    const present = names.filter((n) => s.includes("/" + n));
    if (!present.length) return null;
    const n = r.pick(present);
    const esc = escapeName(n, r);
    return { s: r.next() < 0.5 ? s.replace("/" + n, "/" + esc) : s.split("/" + n).join("/" + esc), label: `${n}->${esc}` };
  }),
  textMutator("number-lie", (s, _objs, r) => mutateNumbers(s, r)),
  textMutator("kids-loop", (s, objs, r) => {
    const pages = objs.filter((o) => /\/Type\s*\/Pages/.test(o.dict));
    if (!pages.length) return null;
    const p = r.pick(pages);
    const kids = r.pick([`[${p.num} 0 R]`, `[${p.num} 0 R ${p.num} 0 R]`, "[]", "[999 0 R]"]);
    const dict = p.dict.replace(/\/Kids\s*\[[^\]]*\]/, `/Kids ${kids}`);
    return { s: s.slice(0, p.dictAt) + dict + s.slice(p.dictAt + p.dict.length), label: kids };
  }),
  textMutator("object-drop", (s, objs, r) => {
    if (!objs.length) return null;
    const o = r.pick(objs);
    return { s: s.slice(0, o.start) + s.slice(o.end), label: `obj${o.num}` };
  }),
  textMutator("object-dup", (s, objs, r) => {
    if (objs.length < 2) return null;
    // A second definition of one object number, with another object's body.
    const a = r.pick(objs),
      b = r.pick(objs);
    const body = s.slice(b.start, b.end).replace(/^\d+\s+\d+\s+obj/, `${a.num} 0 obj`);
    const at = r.next() < 0.5 ? a.end : a.start;
    return { s: s.slice(0, at) + "\n" + body + "\n" + s.slice(at), label: `obj${b.num}->obj${a.num}` };
  }),
  textMutator("xref-damage", (s, _objs, r) => {
    const mode = r.int(0, 5);
    const sx = s.lastIndexOf("startxref");
    if (mode === 0 && sx >= 0) {
      const v = r.pick([0, 1, s.length, s.length + 100, 2147483647, sx]);
      return { s: s.slice(0, sx) + `startxref\n${v}\n%%EOF\n`, label: `startxref=${v}` };
    }
    const table = s.indexOf("\nxref");
    if (mode === 1 && table >= 0) {
      // Shift or zero the offsets of the classic table's entries.
      const delta = r.pick([1, -1, 7, 100000]);
      const head = s.slice(0, table);
      const tail = s
        .slice(table)
        .replace(/(\d{10}) (\d{5}) n/g, (m, off: string, gen: string) =>
          r.next() < 0.5 ? `${String(Math.max(0, Number(off) + delta)).padStart(10, "0")} ${gen} n` : m,
        );
      return { s: head + tail, label: `table+${delta}` };
    }
    if (mode === 2) {
      const cut = s.lastIndexOf("trailer");
      if (cut < 0) return null;
      return { s: s.slice(0, cut), label: "no-trailer" };
    }
    if (mode === 3 && /\/Type\s*\/XRef/.test(s)) {
      const w = r.pick(["[0 0 0]", "[1 8 1]", "[4 4 4]", "[1 2]", "[255 255 255]"]);
      return { s: s.replace(/\/W\s*\[[^\]]*\]/, `/W ${w}`), label: `W=${w}` };
    }
    if (mode === 4) {
      const at = sx >= 0 ? Number(/startxref\s+(\d+)/.exec(s.slice(sx))?.[1] ?? 0) : 0;
      const dictEnd = s.lastIndexOf(">>", sx >= 0 ? sx : s.length);
      if (dictEnd < 0) return null;
      return { s: s.slice(0, dictEnd) + ` /Prev ${at} ` + s.slice(dictEnd), label: `prev-loop=${at}` };
    }
    const v = r.pick([0, 1, 1000000, 2147483647]);
    return { s: s.replace(/\/Size\s+\d+/, `/Size ${v}`).replace(/\/Index\s*\[[^\]]*\]/, `/Index [0 ${v}]`), label: `size=${v}` };
  }),
  {
    name: "stream-data",
    apply(b, r) {
      const s = latin1(b);
      const cands = streams(objects(s));
      if (!cands.length) return null;
      const o = r.pick(cands);
      const out = b.slice();
      const len = o.stream!.end - o.stream!.at;
      if (len <= 0) return null;
      const n = r.pick([1, 3, 12]);
      for (let k = 0; k < n; k++) out[o.stream!.at + r.int(0, len - 1)] ^= 1 << r.int(0, 7);
      return { bytes: out, label: `stream-data(obj${o.num}:flip${n})` };
    },
  },
];

const NUMBER_KEYS = [
  "Width",
  "Height",
  "BitsPerComponent",
  "Length",
  "N",
  "First",
  "Count",
  "Columns",
  "Rows",
  "K",
  "Predictor",
  "Colors",
  "Size",
];

function mutateNumbers(s: string, r: Rng): { s: string; label: string } | null {
  const present = NUMBER_KEYS.filter((k) => new RegExp(`/${k}\\s+-?\\d+`).test(s));
  if (!present.length) return null;
  const key = r.pick(present);
  const v = r.pick(["0", "-1", "1", "3", "7", "15", "16", "33", "65535", "100000", "2147483647", "4294967296", "1e9", "0.5"]);
  return { s: s.replace(new RegExp(`/${key}\\s+-?\\d+`), `/${key} ${v}`), label: `${key}=${v}` };
}
