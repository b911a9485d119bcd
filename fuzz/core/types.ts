/** The fuzzer's vocabulary, shared by the Node runner and the in-suite subset (workerd). */
import type { Rng } from "../../test/fixtures/random";

export type DocFormat = "png" | "jpeg" | "tiff" | "pdf";
export type FuzzFormat = DocFormat | "multipart";
export const FUZZ_FORMATS: readonly FuzzFormat[] = ["png", "jpeg", "tiff", "pdf", "multipart"];

/** A valid file the mutators start from; `kind` says what it exercises (e.g. "tiff/lzw", "jpeg/progressive"). */
export interface Seed {
  format: DocFormat;
  kind: string;
  bytes: Uint8Array;
}

/**
 * One structure-aware edit. `apply` returns the mutated copy and a label naming what was done (with the
 * value it lied with), or null when the input has nothing for it to act on (e.g. no strip table).
 */
export interface Mutator {
  name: string;
  apply(bytes: Uint8Array, r: Rng): { bytes: Uint8Array; label: string } | null;
}

/** A multipart request to the Worker: the route, the Content-Type header and the raw body. */
export interface HttpRequestCase {
  route: "checks" | "references";
  contentType: string;
  body: Uint8Array;
  /** "well-formed": a conforming body, which must not be refused as malformed (400). */
  expect: "well-formed" | "any";
}

export interface FuzzCase {
  index: number;
  format: FuzzFormat;
  /** The seed's kind ("png/palette", "multipart/checks", ...). */
  seed: string;
  /** The edits applied, in order (labels with their values). */
  mutations: string[];
  /** The document (for a document case) or the document inside the multipart body. */
  bytes: Uint8Array;
  http?: HttpRequestCase;
}

/** How one case ended. Anything but "ok" and "typed" is a finding. */
export type DecodeOutcome = { kind: "ok"; pages: number } | { kind: "typed"; code: string } | { kind: "untyped"; error: string };
