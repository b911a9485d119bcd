// How often the locator finds the development sets' real signatures on a form: each image is signed onto
// the 300 dpi signing band of bench/lib/a4-page.ts, encoded as a JPEG and decoded, and searched as the
// check route searches a scanned page. A signature is missed when no box overlaps it (the check would say
// NO_SIGNATURE). Lists the missed images. docs/accuracy.md, "Locating real signatures on a form", quotes it.
// A box that leaves more than 2% of the signature's ink outside cut it (LIST_CUT=1 lists those). With
// --on-line the signature sits on the form's signing line (bench/lib/a4-page.ts, `Placement`).
//   node --import tsx bench/experiments/locate-dataset-forms.ts ../shared/datasets/sigcomp2011-dutch [stride] [--on-line]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { signOnForm } from "../lib/a4-page";
import { openDocument } from "../../src/verify/decode";
import { decodePage } from "../../src/verify/decode/index";
import { locateSignatures } from "../../src/verify/locate";
import { encodeJpeg } from "../../test/fixtures/generator";

const folder = process.argv[2];
if (!folder) throw new Error("usage: locate-dataset-forms.ts <dataset folder> [writer stride]");
const stride = Number(process.argv[3]?.startsWith("--") ? 8 : (process.argv[3] ?? 8));
const placement = process.argv.includes("--on-line") ? "on-line" : "centred";
const rows = readFileSync(join(folder, "index.csv"), "utf8")
  .trim()
  .split(/\r?\n/)
  .slice(1)
  .map((l) => l.split(","));
const writers = [...new Set(rows.map((r) => r[1]))].sort();
const chosen = new Set(writers.filter((_, i) => i % stride === 0));
let pages = 0;
let several = 0;
let cut = 0;
const missed: string[] = [];
const cutPaths: string[] = [];
for (const [path, writer] of rows) {
  if (!chosen.has(writer)) continue;
  const sig = await decodePage(new Uint8Array(readFileSync(join(folder, path))), 0);
  const { page, box } = signOnForm(sig, placement);
  const scanned = await (await openDocument(encodeJpeg(page, 90))).decodePage(0);
  const hits = locateSignatures([scanned], { inputType: "scan" }).filter(
    (f) => f.box.x < box.x + box.w && box.x < f.box.x + f.box.w && f.box.y < box.y + box.h && box.y < f.box.y + f.box.h,
  );
  pages++;
  if (hits.length === 0) missed.push(path);
  else {
    if (hits.length > 1) several++;
    // The signature's ink (darker than 128) outside every box over it: a box that cut it.
    let ink = 0,
      outside = 0;
    for (let y = 0; y < box.h; y++)
      for (let x = 0; x < box.w; x++) {
        if (sig.data[y * sig.width + x] >= 128) continue;
        ink++;
        const px = box.x + x,
          py = box.y + y;
        if (!hits.some((f) => px >= f.box.x && px < f.box.x + f.box.w && py >= f.box.y && py < f.box.y + f.box.h)) outside++;
      }
    if (outside > 0.02 * ink) {
      cut++;
      cutPaths.push(`${path} (${((100 * outside) / ink).toFixed(0)}%)`);
    }
  }
}
console.log(
  `${chosen.size} writers, ${pages} pages: missed ${missed.length}, more than one box ${several}, more than 2% of the ink outside the boxes ${cut}`,
);
if (process.env.LIST_CUT) console.log(`cut: ${cutPaths.join(" ")}`);
if (missed.length > 0) console.log(`missed: ${missed.join(" ")}`);
