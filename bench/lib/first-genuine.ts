// The group experiments' writers (pen-groups.ts, sampling-phase.ts): every K-th writer of a dataset folder,
// its first four genuine signatures decoded, the first one's vector, and that vector's distance per group
// to the next three, averaged: the genuine-to-genuine distance a rendering's move is measured against.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Core } from "../../src/verify/core";
import { decodePage } from "../../src/verify/decode/index";
import type { Raster } from "../../src/verify/types";

export interface FirstGenuine {
  first: Raster;
  vector: Float32Array;
  /** Per group: the mean distance from the first signature to the writer's next three. */
  genuine: number[];
}

export async function* firstGenuine(core: Core, root: string, stride = 4): AsyncGenerator<FirstGenuine> {
  const G = core.groupCount;
  const writers = readdirSync(root)
    .filter((d) => /^\d+$/.test(d))
    .filter((_, i) => i % stride === 0);
  for (const w of writers) {
    const files = readdirSync(join(root, w))
      .filter((f) => f.startsWith("genuine"))
      .sort()
      .slice(0, 4);
    const rs = await Promise.all(files.map(async (f) => decodePage(new Uint8Array(readFileSync(join(root, w, f))), 0)));
    const fv = rs.map((r) => core.extract(r).main.vector);
    const dg = core.groupDistances(fv[0], fv.slice(1));
    const genuine = Array.from({ length: G }, (_, g) => (dg[g] + dg[G + g] + dg[2 * G + g]) / 3);
    yield { first: rs[0], vector: fv[0], genuine };
  }
}
