// How often the locator finds the development sets' real signatures on a form: each image is signed onto
// the 300 dpi signing band of bench/lib/a4-page.ts, encoded as a JPEG and decoded, and searched as the
// check route searches a scanned page. A signature is missed when no box overlaps it (the check would say
// NO_SIGNATURE). Lists the missed images. docs/accuracy.md, "Locating real signatures on a form", quotes it.
//   node --import tsx bench/experiments/locate-dataset-forms.ts ../shared/datasets/sigcomp2011-dutch [stride]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { signOnForm } from "../lib/a4-page";
import { openDocument } from "../../src/verify/decode";
import { decodePage } from "../../src/verify/decode/index";
import { locateSignatures } from "../../src/verify/locate";
import { encodeJpeg } from "../../test/fixtures/generator";

const folder = process.argv[2];
if (!folder) throw new Error("usage: locate-dataset-forms.ts <dataset folder> [writer stride]");
const stride = Number(process.argv[3] ?? 8);
const rows = readFileSync(join(folder, "index.csv"), "utf8")
  .trim()
  .split(/\r?\n/)
  .slice(1)
  .map((l) => l.split(","));
const writers = [...new Set(rows.map((r) => r[1]))].sort();
const chosen = new Set(writers.filter((_, i) => i % stride === 0));
let pages = 0;
let several = 0;
const missed: string[] = [];
for (const [path, writer] of rows) {
  if (!chosen.has(writer)) continue;
  const sig = await decodePage(new Uint8Array(readFileSync(join(folder, path))), 0);
  const { page, box } = signOnForm(sig);
  const scanned = await (await openDocument(encodeJpeg(page, 90))).decodePage(0);
  const hits = locateSignatures([scanned], { inputType: "scan" }).filter(
    (f) => f.box.x < box.x + box.w && box.x < f.box.x + f.box.w && f.box.y < box.y + box.h && box.y < f.box.y + f.box.h,
  );
  pages++;
  if (hits.length === 0) missed.push(path);
  else if (hits.length > 1) several++;
}
console.log(`${chosen.size} writers, ${pages} pages: missed ${missed.length}, more than one box ${several}`);
if (missed.length > 0) console.log(`missed: ${missed.join(" ")}`);
