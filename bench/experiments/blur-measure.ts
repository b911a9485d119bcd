// E27: a blur measure taken on the located crop at its own resolution (before normalisation), to switch a
// questioned signature into the blurred comparison regime of E25 (bench/experiments/blur-regime.md).
// Candidates, each a median over the crop's strong edge pixels (Sobel magnitude, kept where it is a local
// maximum across the edge):
//   ew      edge width: along the gradient direction, the distance between the 10% and 90% levels of the
//           local ink contrast (min on the ink side, max on the paper side, within R px), in pixels;
//   sw      slope width: local contrast over the gradient magnitude at the edge (contrast / max slope), px;
//   *.m     the same after a 3x3 median filter (noise);
//   */st    divided by the median stroke width (2 * ridge distance transform - 1 of the Otsu ink mask) and
//           multiplied by 4, so a typical 4 px 300 dpi stroke leaves the value in pixels;
//   *.q25   the lower quartile over the edges instead of the median (the sharpest edges);
//   *@300   in pixels at 300 dpi: multiplied by 300 / the crop's dpi, where it is known (the development
//           sets are 300 dpi scans; the fixtures' A4 forms are 1240 px wide, 150 dpi).
// Positives (should switch): the robustness suite's `blur` rendering of the development images, and the
// test fixtures' phone photos of a form (photoOf, level and turned 2 degrees), cropped where the locator
// boxes the signature. Negatives: the development images clean and under the other capture conditions of
// bench/lib/render.ts, and the fixture forms clean and scanned (scanOf), cropped alike.
//   node --import tsx bench/experiments/blur-measure.ts [--stride 4] [--writers 40] [--sets a,b] [--json summary.json]
//     [--raw observations.json]
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodePage } from "../../src/verify/decode/index";
import { locateSignatures } from "../../src/verify/locate";
import { cropRaster } from "../../src/verify/render";
import type { Box, Raster } from "../../src/verify/types";
import { boxIoU, makeWriter, photoOf, renderForm, scanOf, signatureBoxes } from "../../test/fixtures/generator";
import { CONDITIONS, otsu, rngFor } from "../lib/render";

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const STRIDE = Number(arg("--stride") ?? 4);
const FIXTURE_WRITERS = Number(arg("--writers") ?? 40);
const DATASETS = (arg("--sets") ?? "bhsig260-bengali,sigcomp2011-dutch")
  .split(",")
  .filter(Boolean)
  .map((d) => join(import.meta.dirname, "../../../shared/datasets", d));
const DEV_CONDITIONS = ["dpi200", "dpi150", "jpeg50", "grey", "binarised", "thin-pen", "thick-pen", "paper+light", "blur"];
const POSITIVE = new Set(["blur", "photo", "photo turned 2"]);
/** Half-length of the profile across an edge, in pixels. */
const R = 5;
const STEP = 0.25;

// ---------------------------------------------------------------------------------------------------------
// The measures.

function median3(r: Raster): Float32Array {
  const { width: W, height: H, data } = r;
  const out = new Float32Array(W * H);
  const v = new Float64Array(9);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let k = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = Math.min(H - 1, Math.max(0, y + dy)) * W;
        for (let dx = -1; dx <= 1; dx++) v[k++] = data[yy + Math.min(W - 1, Math.max(0, x + dx))];
      }
      out[y * W + x] = median9(v);
    }
  return out;
}

/** The median of nine values by partial selection (v is scratch). */
function median9(v: Float64Array): number {
  for (let i = 0; i <= 4; i++) {
    let m = i;
    for (let j = i + 1; j < 9; j++) if (v[j] < v[m]) m = j;
    const t = v[i];
    v[i] = v[m];
    v[m] = t;
  }
  return v[4];
}

function quantileOf(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = Float64Array.from(xs).sort();
  const p = q * (s.length - 1);
  const i = Math.floor(p);
  return i + 1 < s.length ? s[i] + (s[i + 1] - s[i]) * (p - i) : s[i];
}

function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = Float64Array.from(xs).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Global ink and paper levels (Otsu split: mean of the ink side, median of the paper side). */
function levels(img: Float32Array): { ink: number; paper: number; t: number } {
  const bytes = Uint8Array.from(img, (v) => Math.round(v));
  const t = otsu({ width: bytes.length, height: 1, data: bytes });
  const hist = new Float64Array(256);
  let inkSum = 0,
    inkN = 0;
  for (const v of bytes) {
    hist[v]++;
    if (v <= t) {
      inkSum += v;
      inkN++;
    }
  }
  const paperN = bytes.length - inkN;
  let acc = 0,
    paper = 255;
  for (let v = t + 1; v < 256; v++)
    if ((acc += hist[v]) >= paperN / 2) {
      paper = v;
      break;
    }
  return { ink: inkN ? inkSum / inkN : 0, paper, t };
}

/** Median stroke width of the Otsu ink mask: 2 * (chamfer distance to paper at ridge pixels) - 1. */
function strokeWidth(img: Float32Array, W: number, H: number, t: number): number {
  const INF = 1e9;
  const d = new Float32Array(W * H);
  for (let i = 0; i < d.length; i++) d[i] = img[i] <= t ? INF : 0;
  const a = 1,
    b = Math.SQRT2;
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= W || y >= H ? 0 : d[y * W + x]);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      if (d[i] === 0) continue;
      d[i] = Math.min(d[i], at(x - 1, y) + a, at(x, y - 1) + a, at(x - 1, y - 1) + b, at(x + 1, y - 1) + b);
    }
  for (let y = H - 1; y >= 0; y--)
    for (let x = W - 1; x >= 0; x--) {
      const i = y * W + x;
      if (d[i] === 0) continue;
      d[i] = Math.min(d[i], at(x + 1, y) + a, at(x, y + 1) + a, at(x + 1, y + 1) + b, at(x - 1, y + 1) + b);
    }
  const ridge: number[] = [];
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      const v = d[y * W + x];
      if (v === 0) continue;
      let top = true;
      for (let dy = -1; dy <= 1 && top; dy++) for (let dx = -1; dx <= 1; dx++) if (d[(y + dy) * W + x + dx] > v) top = false;
      if (top) ridge.push(v);
    }
  // The mean, not the median: ridge distances take few distinct values, and their median jumps between them.
  return ridge.length ? Math.max(1, (2 * ridge.reduce((a, b) => a + b, 0)) / ridge.length - 1) : Number.NaN;
}

function bilinear(img: Float32Array, W: number, H: number, x: number, y: number): number {
  x = Math.min(W - 1.001, Math.max(0, x));
  y = Math.min(H - 1.001, Math.max(0, y));
  const x0 = Math.floor(x),
    y0 = Math.floor(y),
    fx = x - x0,
    fy = y - y0,
    i = y0 * W + x0;
  const top = img[i] + (img[i + 1] - img[i]) * fx;
  const bot = img[i + W] + (img[i + W + 1] - img[i + W]) * fx;
  return top + (bot - top) * fy;
}

interface EdgeStats {
  /** Median 10-90% edge width, px. */
  ew: number;
  /** Median contrast / max slope, px. */
  sw: number;
  /** Their lower quartiles: the sharpest edges (blur puts a floor under every edge, a sharp crop has many below it). */
  ewQ25: number;
  swQ25: number;
  edges: number;
}

/** Pixel centres are at integer coordinates here (the image is sampled as given). */
function edgeStats(img: Float32Array, W: number, H: number, lv: { ink: number; paper: number }): EdgeStats {
  const cg = lv.paper - lv.ink;
  if (cg < 20 || W < 8 || H < 8) return { ew: Number.NaN, sw: Number.NaN, ewQ25: Number.NaN, swQ25: Number.NaN, edges: 0 };
  const gx = new Float32Array(W * H),
    gy = new Float32Array(W * H),
    g = new Float32Array(W * H);
  for (let y = 1; y < H - 1; y++)
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      const sx = img[i - W + 1] + 2 * img[i + 1] + img[i + W + 1] - img[i - W - 1] - 2 * img[i - 1] - img[i + W - 1];
      const sy = img[i + W - 1] + 2 * img[i + W] + img[i + W + 1] - img[i - W - 1] - 2 * img[i - W] - img[i - W + 1];
      gx[i] = sx / 8;
      gy[i] = sy / 8;
      g[i] = Math.hypot(sx, sy) / 8;
    }
  const minSlope = 0.1 * cg;
  const widths: number[] = [];
  const slopes: number[] = [];
  const n = Math.round((2 * R) / STEP) + 1;
  const prof = new Float64Array(n);
  const mid = (n - 1) / 2;
  for (let y = R; y < H - R; y++)
    for (let x = R; x < W - R; x++) {
      const i = y * W + x;
      const m = g[i];
      if (m < minSlope) continue;
      const nx = gx[i] / m,
        ny = gy[i] / m;
      if (m < bilinear(g, W, H, x + nx, y + ny) || m < bilinear(g, W, H, x - nx, y - ny)) continue;
      // The profile runs from the ink side (t = -R) to the paper side (t = +R).
      let lo = Number.POSITIVE_INFINITY,
        hi = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < n; k++) {
        const t = (k - mid) * STEP;
        const v = bilinear(img, W, H, x + t * nx, y + t * ny);
        prof[k] = v;
        if (k <= mid && v < lo) lo = v;
        if (k >= mid && v > hi) hi = v;
      }
      const c = hi - lo;
      if (c < 0.5 * cg) continue;
      const v10 = lo + 0.1 * c,
        v90 = lo + 0.9 * c;
      let t10 = Number.NaN,
        t90 = Number.NaN;
      for (let k = mid; k >= 1; k--) {
        if (prof[k] <= v10) {
          t10 = 0;
          break;
        }
        if (prof[k - 1] <= v10) {
          t10 = (k - 1 + (prof[k - 1] - v10) / (prof[k - 1] - prof[k]) - mid) * STEP;
          break;
        }
      }
      for (let k = mid; k < n - 1; k++) {
        if (prof[k] >= v90) {
          t90 = 0;
          break;
        }
        if (prof[k + 1] >= v90) {
          t90 = (k + (v90 - prof[k]) / (prof[k + 1] - prof[k]) - mid) * STEP;
          break;
        }
      }
      if (Number.isNaN(t10) || Number.isNaN(t90)) continue;
      widths.push(t90 - t10);
      slopes.push(c / m);
    }
  return {
    ew: median(widths),
    sw: median(slopes),
    ewQ25: quantileOf(widths, 0.25),
    swQ25: quantileOf(slopes, 0.25),
    edges: widths.length,
  };
}

export type Measures = Record<string, number>;

/** Every candidate on one crop; dpi when known (for the @300 variants). */
function measure(r: Raster, dpi: number): Measures {
  const raw = Float32Array.from(r.data);
  const med = median3(r);
  const lv = levels(med);
  const st = strokeWidth(med, r.width, r.height, lv.t);
  const a = edgeStats(raw, r.width, r.height, lv);
  const b = edgeStats(med, r.width, r.height, lv);
  const k300 = 300 / dpi;
  return {
    ew: a.ew,
    "ew.m": b.ew,
    "ew.m/st": (4 * b.ew) / st,
    "ew.m@300": b.ew * k300,
    sw: a.sw,
    "sw.m": b.sw,
    "sw.m/st": (4 * b.sw) / st,
    "sw.m@300": b.sw * k300,
    "ew.q25": a.ewQ25,
    "ew.m.q25": b.ewQ25,
    "sw.q25": a.swQ25,
    "sw.m.q25": b.swQ25,
    stroke: st,
    edges: b.edges,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The crops.

interface Obs {
  source: string;
  condition: string;
  kind: "genuine" | "forged";
  m: Measures;
}

const observations: Obs[] = [];
const log = (s: string) => process.stderr.write(s);

function parseIndex(folder: string): { path: string; writer: string; label: string }[] {
  const lines = readFileSync(join(folder, "index.csv"), "utf8").split(/\r?\n/).filter(Boolean);
  const head = lines[0].split(",");
  return lines.slice(1).map((l) => {
    const c = l.split(",");
    return { path: c[head.indexOf("path")], writer: c[head.indexOf("writer")], label: c[head.indexOf("label")] };
  });
}

async function devSet(folder: string): Promise<void> {
  const name = folder.split("/").pop()!;
  const rows = parseIndex(folder);
  const writers = [...new Set(rows.map((r) => r.writer))].filter((_, i) => i % STRIDE === 0);
  const keep = new Set(writers);
  const picked = rows.filter((r) => keep.has(r.writer) && (r.label === "genuine" || r.label === "forgery"));
  const conditions = CONDITIONS.filter((c) => DEV_CONDITIONS.includes(c.name));
  const t0 = Date.now();
  for (const [j, row] of picked.entries()) {
    const kind = row.label === "genuine" ? "genuine" : "forged";
    const clean = await decodePage(new Uint8Array(readFileSync(join(folder, row.path))), 0);
    observations.push({ source: name, condition: "clean", kind, m: measure(clean, 300) });
    for (const c of conditions) {
      const r = await c.render(clean, rngFor(`${c.name}|${row.path}`));
      const dpi = c.name === "dpi200" ? 200 : c.name === "dpi150" ? 150 : 300;
      observations.push({ source: name, condition: c.name, kind, m: measure(r, dpi) });
    }
    if (j % 20 === 0) log(`\r${name}: ${j + 1} / ${picked.length} images (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  log("\n");
}

function fixtures(): void {
  const boxes = signatureBoxes(1240, 1754, 2);
  let unmatched = 0;
  const t0 = Date.now();
  for (let s = 1; s <= FIXTURE_WRITERS; s++) {
    const writer = makeWriter(1000 + s);
    const form = renderForm({
      signatures: [
        { writer, variant: 1, box: boxes[0] },
        { writer, variant: 2, box: boxes[1] },
      ],
      boxes,
      seed: s,
    });
    const truths = form.signatures.map((x) => x.inkBox);
    const pages: [string, string, Raster][] = [
      ["form clean", "form", form.raster],
      ["scan", "scan", scanOf(form.raster, { seed: s, dx: 10, dy: -6, rotation: 1 })],
      ["photo", "photo", photoOf(form.raster, { seed: s, rotation: 0 })],
      ["photo turned 2", "photo", photoOf(form.raster, { seed: s, rotation: 2 })],
    ];
    for (const [condition, inputType, page] of pages) {
      const found = locateSignatures([page], { inputType });
      const used = new Set<number>();
      for (const f of found) {
        let best = -1,
          iou = 0.3;
        truths.forEach((t: Box, k) => {
          const v = boxIoU(f.box, t);
          if (v > iou && !used.has(k)) {
            iou = v;
            best = k;
          }
        });
        if (best < 0) {
          unmatched++;
          continue;
        }
        used.add(best);
        observations.push({ source: "fixtures", condition, kind: "genuine", m: measure(cropRaster(page, f.box), 150) });
      }
      unmatched += truths.length - used.size;
    }
    log(`\rfixtures: writer ${s} / ${FIXTURE_WRITERS} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  log(`\nfixtures: ${unmatched} located boxes or signatures unmatched (IoU <= 0.3), left out\n`);
}

// ---------------------------------------------------------------------------------------------------------
// The tables.

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const p = q * (sorted.length - 1);
  const i = Math.floor(p);
  return i + 1 < sorted.length ? sorted[i] + (sorted[i + 1] - sorted[i]) * (p - i) : sorted[i];
}

interface Group {
  label: string;
  positive: boolean;
  values: (key: string) => Float64Array;
}

function groups(): Group[] {
  const keys = new Map<string, Obs[]>();
  for (const o of observations) {
    const label = `${o.source} ${o.condition} ${o.kind}`;
    let list = keys.get(label);
    if (!list) keys.set(label, (list = []));
    list.push(o);
  }
  return [...keys.entries()].map(([label, list]) => ({
    label,
    positive: POSITIVE.has(list[0].condition),
    values: (key) => Float64Array.from(list.map((o) => o.m[key]).filter((v) => Number.isFinite(v))).sort(),
  }));
}

/** The share that switches: strictly above the threshold. */
const rate = (v: Float64Array, t: number) => (v.length ? v.filter((x) => x > t).length / v.length : Number.NaN);
const pc = (x: number) => `${(100 * x).toFixed(1)}%`;
const f2 = (x: number) => x.toFixed(2);

async function main(): Promise<void> {
  fixtures();
  for (const d of DATASETS) await devSet(d);
  const gs = groups();
  const keys = Object.keys(observations[0].m).filter((k) => k !== "edges" && k !== "stroke");
  const summary: Record<string, unknown> = {};
  for (const key of [...keys, "stroke", "edges"]) {
    console.log(`\n### ${key}\n`);
    const scored = keys.includes(key);
    // Threshold A: the highest 98th percentile of any negative group (every sharp group switches <= 2%).
    // Threshold B: the lowest 10th percentile of any positive group (every blurred group caught >= 90%).
    const tA = Math.max(...gs.filter((g) => !g.positive).map((g) => quantile(g.values(key), 0.98)));
    const tB = Math.min(...gs.filter((g) => g.positive).map((g) => quantile(g.values(key), 0.1)));
    if (scored) console.log(`threshold A (negatives <= 2%): ${f2(tA)}; threshold B (positives >= 90%): ${f2(tB)}\n`);
    console.log(`| group | n | P5 | median | P95 |${scored ? " switched at A | switched at B |" : ""}`);
    console.log(`|---|---|---|---|---|${scored ? "---|---|" : ""}`);
    const rows: unknown[] = [];
    for (const g of gs) {
      const v = g.values(key);
      const cells = [v.length, f2(quantile(v, 0.05)), f2(quantile(v, 0.5)), f2(quantile(v, 0.95))];
      const sw = scored ? [pc(rate(v, tA)), pc(rate(v, tB))] : [];
      console.log(`| ${g.positive ? "**+** " : ""}${g.label} | ${[...cells, ...sw].join(" | ")} |`);
      rows.push({
        group: g.label,
        positive: g.positive,
        n: v.length,
        p5: quantile(v, 0.05),
        median: quantile(v, 0.5),
        p95: quantile(v, 0.95),
        atA: scored ? rate(v, tA) : undefined,
        atB: scored ? rate(v, tB) : undefined,
      });
    }
    summary[key] = { thresholdA: tA, thresholdB: tB, rows };
  }
  const out = arg("--json");
  if (out) writeFileSync(out, JSON.stringify(summary, null, 1));
  const raw = arg("--raw");
  if (raw) writeFileSync(raw, JSON.stringify(observations));
}

await main();
