// Synthetic signatures photographed close up and sent as `photo` (docs/accuracy.md, "A lone signature sent as
// a photo"): does the page search box the whole signature? Writers 1 to 80 (the fixture generator's), signing
// 1, 360 px high, the pen `PEN` times the writer's own (default 0.5: a fine pen), cut to the ink plus `MARGIN`
// px of paper (default 30; 1 is a tight crop, the strokes touching the frame), then given the fixtures' photo
// look (sigma 0.8 blur, uneven light, sensor noise). Per image: the share of the crop's ink (darker than 160)
// outside the most confident box; listed when over 2% (1.00: nothing found).
//   MARGIN=30 PEN=0.5 node --import tsx bench/experiments/locate-closeups.ts
import { locateSignatures } from "../../src/verify/locate";
import { cropRaster } from "../../src/verify/render";
import { inkShareIn, makeWriter, photoOf, renderSignature } from "../../test/fixtures/generator";

const margin = Number(process.env.MARGIN ?? 30);
const pen = Number(process.env.PEN ?? 0.5);
const cut: string[] = [];
let n = 0;
for (let seed = 1; seed <= 80; seed++) {
  const writer = makeWriter(seed);
  const sig = renderSignature({ ...writer, penWidth: writer.penWidth * pen }, { variant: 1, height: 360 });
  const ink = locateSignatures([sig], { inputType: "signature_image" })[0].box;
  const x = Math.max(0, ink.x - margin),
    y = Math.max(0, ink.y - margin);
  const crop = cropRaster(sig, { x, y, w: Math.min(sig.width - x, ink.w + 2 * margin), h: Math.min(sig.height - y, ink.h + 2 * margin) });
  const photo = photoOf(crop, { seed, blur: 0.8, illumination: 0.3 });
  const found = locateSignatures([photo], { inputType: "photo" });
  n++;
  const b = found.length ? found.reduce((p, q) => (q.confidence > p.confidence ? q : p)).box : { x: 0, y: 0, w: 0, h: 0 };
  const out = 1 - inkShareIn(crop, b);
  if (out > 0.02) cut.push(`${seed}:${out.toFixed(2)}`);
}
console.log("margin", margin, "pen", pen, "images", n, "ink out >2%", cut.length, cut.join(" "));
