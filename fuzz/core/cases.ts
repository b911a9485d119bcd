/**
 * Case generation: case `index` of run `seed` is a pure function of the two (and the seed corpus), so
 * any case can be regenerated for its report or replay without storing the run.
 */
import { rng, type Rng } from "../../test/fixtures/random";
import { genericMutators } from "../mutators/generic";
import { jpegMutators } from "../mutators/jpeg";
import { multipartCase } from "../mutators/multipart";
import { pdfMutators } from "../mutators/pdf";
import { pngMutators } from "../mutators/png";
import { tiffMutators } from "../mutators/tiff";
import type { DocFormat, FuzzCase, FuzzFormat, Mutator, Seed } from "./types";

export const STRUCTURE_MUTATORS: Record<DocFormat, Mutator[]> = {
  png: pngMutators,
  jpeg: jpegMutators,
  tiff: tiffMutators,
  pdf: pdfMutators,
};

/** How often each format comes up (multipart cases go through the Worker and cost more). */
const WEIGHTS: Record<FuzzFormat, number> = { png: 20, jpeg: 22, tiff: 24, pdf: 22, multipart: 12 };

function pickWeighted(formats: readonly FuzzFormat[], r: Rng): FuzzFormat {
  const total = formats.reduce((n, f) => n + WEIGHTS[f], 0);
  let x = r.next() * total;
  for (const f of formats) {
    x -= WEIGHTS[f];
    if (x < 0) return f;
  }
  return formats[formats.length - 1];
}

/** 1 to 3 edits: mostly structure-aware, sometimes a byte-level one on top, sometimes bytes alone. */
export function mutateDocument(seed: Seed, r: Rng): { bytes: Uint8Array; mutations: string[] } {
  let bytes = seed.bytes;
  const mutations: string[] = [];
  const structural = STRUCTURE_MUTATORS[seed.format];
  const plan: Mutator[] = [];
  if (r.next() < 0.12) plan.push(r.pick(genericMutators));
  else {
    const n = r.next() < 0.6 ? 1 : r.next() < 0.7 ? 2 : 3;
    for (let i = 0; i < n; i++) plan.push(r.pick(structural));
    if (r.next() < 0.2) plan.push(r.pick(genericMutators));
  }
  for (const m of plan) {
    const got = m.apply(bytes, r);
    if (got) {
      bytes = got.bytes;
      mutations.push(got.label);
    }
  }
  if (mutations.length === 0) {
    const got = genericMutators[0].apply(bytes, r)!;
    bytes = got.bytes;
    mutations.push(got.label);
  }
  return { bytes, mutations };
}

/** Mixes the run seed and the index into one PRNG seed. */
function caseRng(runSeed: number, index: number): Rng {
  return rng(((runSeed * 0x9e3779b1) ^ (index * 0x85ebca77)) >>> 0);
}

/** The format of case `index` alone (the first draw of its PRNG), without building the case. */
export function caseFormat(runSeed: number, index: number, formats: readonly FuzzFormat[]): FuzzFormat {
  return pickWeighted(formats, caseRng(runSeed, index));
}

export function makeCase(corpus: Seed[], runSeed: number, index: number, formats: readonly FuzzFormat[]): FuzzCase {
  const r = caseRng(runSeed, index);
  const format = pickWeighted(formats, r);
  if (format !== "multipart") {
    const seed = r.pick(corpus.filter((s) => s.format === format));
    const { bytes, mutations } = mutateDocument(seed, r);
    return { index, format, seed: seed.kind, mutations, bytes };
  }
  const route = r.next() < 0.7 ? "checks" : "references";
  const seed = r.pick(corpus);
  const docMutated = r.next() < 0.5;
  const doc = docMutated ? mutateDocument(seed, r) : { bytes: seed.bytes, mutations: [] };
  const mp = multipartCase(route, doc.bytes, r, docMutated);
  return {
    index,
    format,
    seed: `multipart/${route}:${seed.kind}`,
    mutations: [`multipart:${mp.label}`, ...doc.mutations],
    bytes: doc.bytes,
    http: { route, contentType: mp.contentType, body: mp.body, expect: mp.expect },
  };
}

/** The mutator a finding is filed under: the first structure-aware edit's name, without its values. */
export function mutationFamily(c: FuzzCase): string {
  const first = c.mutations.find((m) => !m.startsWith("multipart:")) ?? c.mutations[0] ?? "none";
  return first.replace(/\(.*$/, "");
}
