/**
 * Multipart bodies for the Worker's upload routes, built by hand so the framing itself can be broken:
 * boundaries (long, quoted, mismatched, missing), part headers (huge, many, missing or malformed
 * Content-Disposition, bare LF), missing, extra and duplicated parts, the JSON part as a text field and
 * as a file part typed JSON (what curl -F 'request=@req.json;type=application/json' sends), invalid
 * JSON, and truncated bodies. A well-formed body carries a document (a seed or a mutated one), so the
 * full decode path runs behind the real routing, authentication and body limits.
 */
import type { Rng } from "../../test/fixtures/random";
import { ascii, concat } from "../core/bytes";
import type { HttpRequestCase } from "../core/types";

interface Part {
  headers: string[];
  body: Uint8Array;
}

interface Body {
  boundary: string;
  /** The boundary the Content-Type header names (normally the same). */
  headerBoundary: string | null;
  quoteBoundary: boolean;
  parts: Part[];
  eol: string;
  preamble: string;
  closed: boolean;
  mediaType: string;
}

/** The subject the check route names; the runner enrols it before the first case. */
export const FUZZ_SUBJECT = "fuzz-subject";

function filePart(name: string, bytes: Uint8Array, type = "application/octet-stream", filename = `${name}.bin`): Part {
  return { headers: [`Content-Disposition: form-data; name="${name}"; filename="${filename}"`, `Content-Type: ${type}`], body: bytes };
}

function fieldPart(name: string, text: string): Part {
  return { headers: [`Content-Disposition: form-data; name="${name}"`], body: ascii(text) };
}

function encode(b: Body): Uint8Array {
  const out: Uint8Array[] = [ascii(b.preamble)];
  for (const p of b.parts) {
    out.push(ascii(`--${b.boundary}${b.eol}${p.headers.map((h) => h + b.eol).join("")}${b.eol}`), p.body, ascii(b.eol));
  }
  if (b.closed) out.push(ascii(`--${b.boundary}--${b.eol}`));
  return concat(out);
}

function contentType(b: Body): string {
  if (b.headerBoundary === null) return b.mediaType;
  return `${b.mediaType}; boundary=${b.quoteBoundary ? `"${b.headerBoundary}"` : b.headerBoundary}`;
}

type Expectation = HttpRequestCase["expect"];

export interface MultipartCase extends HttpRequestCase {
  label: string;
}

function base(route: HttpRequestCase["route"], doc: Uint8Array, r: Rng): Body {
  const boundary = `----fuzz${r.int(0, 1e9).toString(36)}`;
  const parts =
    route === "checks"
      ? [fieldPart("request", JSON.stringify({ items: [{ file: "d", subject_reference: FUZZ_SUBJECT }] })), filePart("d", doc)]
      : [filePart("r1", doc, "image/png", "r1.png"), fieldPart("source.r1", "unverified")];
  return {
    boundary,
    headerBoundary: boundary,
    quoteBoundary: false,
    parts,
    eol: "\r\n",
    preamble: "",
    closed: true,
    mediaType: "multipart/form-data",
  };
}

type Edit = (b: Body, r: Rng, route: HttpRequestCase["route"]) => string;

/** Replaces the JSON part (wherever earlier edits left it), or adds it back. */
function setRequestPart(b: Body, p: Part): void {
  const i = b.parts.findIndex((x) => x.headers[0]?.includes('name="request"'));
  if (i >= 0) b.parts[i] = p;
  else b.parts.unshift(p);
}

function requestBody(b: Body): Uint8Array {
  return b.parts.find((x) => x.headers[0]?.includes('name="request"'))?.body ?? ascii("{}");
}

/** Variants a conforming client may send: each must be accepted like the plain body. */
const WELL_FORMED: Record<string, Edit> = {
  plain: () => "plain",
  "json-as-file": (b, _r, route) => {
    if (route !== "checks") return "plain";
    setRequestPart(b, filePart("request", requestBody(b), "application/json", "req.json"));
    return "json-as-file";
  },
  "json-as-file-charset": (b, _r, route) => {
    if (route !== "checks") return "plain";
    setRequestPart(b, filePart("request", requestBody(b), "application/json; charset=utf-8", "request.json"));
    return "json-as-file-charset";
  },
  "json-as-blob": (b, _r, route) => {
    // What FormData.append("request", new Blob([json], { type: "application/json" })) sends.
    if (route !== "checks") return "plain";
    setRequestPart(b, filePart("request", requestBody(b), "application/json", "blob"));
    return "json-as-blob";
  },
  "quoted-boundary": (b) => {
    b.quoteBoundary = true;
    return "quoted-boundary";
  },
  "long-boundary": (b, r) => {
    b.boundary = "x".repeat(r.int(40, 70));
    b.headerBoundary = b.boundary;
    return "long-boundary";
  },
  "part-order": (b) => {
    b.parts.reverse();
    return "part-order";
  },
  "preamble-epilogue": (b) => {
    b.preamble = "This is a preamble.\r\n";
    return "preamble";
  },
  "no-part-type": (b) => {
    for (const p of b.parts) p.headers = p.headers.filter((h) => !h.startsWith("Content-Type"));
    return "no-part-type";
  },
};

/** Broken or hostile framing: any documented 4xx is fine, a 5xx or a hang is not. */
const HOSTILE: Record<string, Edit> = {
  "missing-json": (b) => {
    b.parts = b.parts.filter((p) => !p.headers[0]?.includes('"request"'));
    return "missing-json";
  },
  "missing-file": (b) => {
    b.parts = b.parts.filter((p) => !p.headers[0]?.includes("filename"));
    return "missing-file";
  },
  "duplicate-part": (b, r) => {
    const p = somePart(b, r);
    b.parts.push(p, p);
    return "duplicate-part";
  },
  "extra-part": (b, r) => {
    b.parts.push(r.next() < 0.5 ? fieldPart("extra", "x") : filePart("zz", new Uint8Array(10)));
    return "extra-part";
  },
  "invalid-json": (b, r, route) => {
    if (route !== "checks") return "plain";
    const text = r.pick([
      "{not json",
      "[]",
      "null",
      '"x"',
      '{"items":"x"}',
      '{"items":[{"file":"d"}]}',
      `{"items":[${'{"file":"d","subject_reference":"s"},'.repeat(200)}{}]}`,
      "{".repeat(10000),
    ]);
    setRequestPart(b, r.next() < 0.5 ? fieldPart("request", text) : filePart("request", ascii(text), "application/json", "req.json"));
    return "invalid-json";
  },
  "json-wrong-type": (b, _r, route) => {
    if (route !== "checks") return "plain";
    setRequestPart(b, filePart("request", requestBody(b), "image/png", "req.png"));
    return "json-wrong-type";
  },
  "file-as-field": (b) => {
    const i = b.parts.findIndex((p) => p.headers[0]?.includes("filename"));
    if (i >= 0) b.parts[i].headers = [b.parts[i].headers[0].replace(/; filename="[^"]*"/, "")];
    return "file-as-field";
  },
  "huge-header": (b, r) => {
    const n = r.pick([8 << 10, 64 << 10, 1 << 20]);
    somePart(b, r).headers.push(`X-Pad: ${"a".repeat(n)}`);
    return `huge-header(${n})`;
  },
  "many-headers": (b, r) => {
    const n = r.pick([100, 1000, 10000]);
    const p = somePart(b, r);
    for (let i = 0; i < n; i++) p.headers.push(`X-H${i}: v`);
    return `many-headers(${n})`;
  },
  "huge-json": (b, r, route) => {
    if (route !== "checks") return "plain";
    const n = r.pick([1 << 20, 4 << 20]);
    setRequestPart(
      b,
      fieldPart("request", JSON.stringify({ items: [{ file: "d", subject_reference: FUZZ_SUBJECT, metadata: { pad: "p".repeat(n) } }] })),
    );
    return `huge-json(${n})`;
  },
  "bad-disposition": (b, r) => {
    const p = somePart(b, r);
    p.headers[0] = r.pick([
      "Content-Disposition: form-data",
      'Content-Disposition: attachment; name="d"',
      "Content-Disposition: form-data; name=",
      "Content-Disposition: form-data; name=\"d\"; filename*=UTF-8''%E2%82%AC.png",
      'Content-Disposition: form-data; name="\u00ff\u00fe"; filename="\\"x"',
      "Content-Disposition form-data name d",
      "",
    ]);
    return "bad-disposition";
  },
  "bare-lf": (b) => {
    b.eol = "\n";
    return "bare-lf";
  },
  "boundary-mismatch": (b) => {
    b.headerBoundary = `${b.boundary}x`;
    return "boundary-mismatch";
  },
  "no-boundary": (b) => {
    b.headerBoundary = null;
    return "no-boundary";
  },
  "empty-boundary": (b) => {
    b.boundary = "";
    b.headerBoundary = "";
    return "empty-boundary";
  },
  "overlong-boundary": (b, r) => {
    b.boundary = "b".repeat(r.pick([71, 200, 5000]));
    b.headerBoundary = b.boundary;
    return "overlong-boundary";
  },
  "boundary-in-data": (b) => {
    const i = b.parts.findIndex((p) => p.headers[0]?.includes("filename"));
    if (i >= 0) b.parts[i].body = concat([b.parts[i].body.subarray(0, 16), ascii(`\r\n--${b.boundary}\r\n`), b.parts[i].body.subarray(16)]);
    return "boundary-in-data";
  },
  unclosed: (b) => {
    b.closed = false;
    return "unclosed";
  },
  "wrong-media-type": (b, r) => {
    b.mediaType = r.pick(["multipart/mixed", "text/plain", "multipart/form-data; charset=utf-8", "application/json"]);
    return "wrong-media-type";
  },
  "no-parts": (b) => {
    b.parts = [];
    return "no-parts";
  },
  "many-parts": (b, r) => {
    const n = r.pick([25, 200, 2000]);
    for (let i = 0; i < n; i++) b.parts.push(filePart(`p${i}`, new Uint8Array(4)));
    return `many-parts(${n})`;
  },
};

export const MULTIPART_EDITS = { wellFormed: Object.keys(WELL_FORMED), hostile: Object.keys(HOSTILE) };

/**
 * One multipart case. With `docMutated` the document is a mutated one and the framing stays
 * well-formed (the decoders behind the route are under test); otherwise the framing is edited.
 */
/** A random part, or a new empty field when edits have removed them all. */
function somePart(b: Body, r: Rng): Part {
  if (!b.parts.length) b.parts.push(fieldPart("empty", ""));
  return r.pick(b.parts);
}

export function multipartCase(route: HttpRequestCase["route"], doc: Uint8Array, r: Rng, docMutated: boolean): MultipartCase {
  const b = base(route, doc, r);
  let label: string;
  let expect: Expectation = "well-formed";
  if (docMutated || r.next() < 0.3) {
    label = WELL_FORMED[r.pick(Object.keys(WELL_FORMED))](b, r, route);
  } else {
    const n = r.next() < 0.8 ? 1 : 2;
    const labels: string[] = [];
    for (let i = 0; i < n; i++) labels.push(HOSTILE[r.pick(Object.keys(HOSTILE))](b, r, route));
    label = labels.join("+");
    expect = labels.every((l) => l === "plain") ? "well-formed" : "any";
  }
  let body = encode(b);
  if (!docMutated && expect === "any" && r.next() < 0.15) {
    // Cut the body anywhere: inside a header, a boundary or the document.
    const at = r.int(0, body.length);
    body = body.slice(0, at);
    label += `+truncated(${at})`;
  }
  return { route, contentType: contentType(b), body, expect, label };
}
