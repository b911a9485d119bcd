// Dataset writers enrolled as subjects, as the pipeline enrols bare signature images (enrolReference, then
// buildReferenceModel): what the end-to-end experiments (bench/experiments/photo-checks.ts and the others
// checking through checkDocument) check against.
import { readFileSync } from "node:fs";
import type { Core } from "../../src/verify/core";
import { buildReferenceModel, type ReferenceInput, type ReferenceModel } from "../../src/verify/model";
import { enrolReference } from "../../src/verify/pipeline";

/** One row of a dataset's index.csv: the image's path, its writer, and `genuine` or `forgery`. */
export type IndexRow = [path: string, writer: string, kind: string];

/** The rows of `<dir>/index.csv`, header left out. */
export function indexRows(dir: string): IndexRow[] {
  return readFileSync(`${dir}/index.csv`, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.split(",") as IndexRow);
}

/**
 * `paths` are image paths under `dir`; each enrolled with no quality floor. Null when fewer than two
 * could be enrolled, too few for a model worth checking against.
 */
export async function enrolledModel(core: Core, dir: string, paths: readonly string[]): Promise<ReferenceModel | null> {
  const refs: ReferenceInput[] = [];
  for (const path of paths) {
    const e = await enrolReference(core, new Uint8Array(readFileSync(`${dir}/${path}`)), { inputType: "signature_image", qualityFloor: 0 });
    if ("features" in e) refs.push({ refId: path, features: e.features, variantRow: e.variantRow ?? undefined });
  }
  return refs.length < 2 ? null : buildReferenceModel(core, refs);
}

export interface EnrolledSubject {
  writer: string;
  /** The writer's genuine signatures after the `enrolled` first ones, which the model was built from. */
  questionedGenuine: IndexRow[];
  forgeries: IndexRow[];
  model: ReferenceModel;
}

/**
 * Every `stride`-th writer of the dataset in `dir` (in index order), its first `enrolled` genuine
 * signatures enrolled whole. A writer with fewer than two usable references is passed over.
 */
export async function* enrolledSubjects(
  core: Core,
  dir: string,
  rows: readonly IndexRow[],
  stride: number,
  enrolled = 5,
): AsyncGenerator<EnrolledSubject> {
  const writers = [...new Set(rows.map((r) => r[1]))].filter((_, i) => i % stride === 0);
  for (const writer of writers) {
    const genuine = rows.filter((r) => r[1] === writer && r[2] === "genuine");
    const model = await enrolledModel(
      core,
      dir,
      genuine.slice(0, enrolled).map((r) => r[0]),
    );
    if (!model) continue;
    yield {
      writer,
      questionedGenuine: genuine.slice(enrolled),
      forgeries: rows.filter((r) => r[1] === writer && r[2] === "forgery"),
      model,
    };
  }
}
