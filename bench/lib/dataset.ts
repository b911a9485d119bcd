// A dataset folder laid out like ../shared/datasets/*: index.csv (path, writer, label, ...) and PNGs.
// Every image goes through the production decoder (grey pixels, no metadata) and feature extractor.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { decodePage } from "../../src/verify/decode/index";
import { extractFeatures, FEATURE_VERSION, featureVector, type SignatureFeatures } from "../../src/verify/features";
import type { Core } from "../../src/verify/core";
import type { Raster } from "../../src/verify/types";

export interface Sample {
  path: string;
  features: SignatureFeatures;
  /** Kept for the first genuine samples only (synthetic variants when a model has few references). */
  raster?: Raster;
}

export interface Writer {
  id: string;
  genuine: Sample[];
  forgeries: Sample[];
}

export interface Dataset {
  name: string;
  folder: string;
  writers: Writer[];
  images: number;
  extractMs: number;
}

/** Rasters are kept for this many first genuine samples per writer. */
export const RASTERS_KEPT = 2;

function parseCsv(text: string): Record<string, string>[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  const split = (l: string) => {
    const out: string[] = [];
    let cur = "",
      quoted = false;
    for (let i = 0; i < l.length; i++) {
      const c = l[i];
      if (quoted) {
        if (c === '"' && l[i + 1] === '"') {
          cur += '"';
          i++;
        } else if (c === '"') quoted = false;
        else cur += c;
      } else if (c === '"') quoted = true;
      else if (c === ",") {
        out.push(cur);
        cur = "";
      } else cur += c;
    }
    out.push(cur);
    return out.map((s) => s.trim());
  };
  const head = split(lines[0]).map((h) => h.toLowerCase());
  for (const col of ["path", "writer", "label"]) if (!head.includes(col)) throw new Error(`index.csv has no "${col}" column`);
  return lines.slice(1).map((l) => {
    const cells = split(l);
    return Object.fromEntries(head.map((h, i) => [h, cells[i] ?? ""]));
  });
}

export interface LoadOptions {
  /** Keep only every k-th writer (iteration only; reported tables use all). */
  writerStride?: number;
  /** Cache feature vectors under this folder, keyed by the core's bytes and the image's bytes. */
  cacheDir?: string;
  log?: (s: string) => void;
  /**
   * The pixels the features are taken from, given the decoded image (default: the image itself). `tag`
   * names it in the cache file, so features of different paths are never mixed up.
   */
  extract?: { tag: string; pixels: (raster: Raster, path: string) => Promise<Raster> };
}

export async function loadDataset(core: Core, folder: string, coreBytes: Uint8Array, opts: LoadOptions = {}): Promise<Dataset> {
  const dir = resolve(folder);
  const rows = parseCsv(readFileSync(join(dir, "index.csv"), "utf8"));
  const byWriter = new Map<string, Writer>();
  for (const r of rows) {
    let w = byWriter.get(r.writer);
    if (!w) byWriter.set(r.writer, (w = { id: r.writer, genuine: [], forgeries: [] }));
    const label = r.label.toLowerCase();
    if (label !== "genuine" && label !== "forgery") continue;
    (label === "genuine" ? w.genuine : w.forgeries).push({ path: r.path } as Sample);
  }
  let writers = [...byWriter.values()];
  if (opts.writerStride && opts.writerStride > 1) writers = writers.filter((_, i) => i % opts.writerStride! === 0);

  // The version too: the host side of extraction (core.ts) can change the features without the core's bytes.
  const coreHash = createHash("sha256").update(coreBytes).update(`v${FEATURE_VERSION}`).digest("hex").slice(0, 16);
  const tag = opts.extract ? `-${opts.extract.tag}` : "";
  const cacheFile = opts.cacheDir ? join(opts.cacheDir, `${basename(dir)}${tag}-${coreHash}.json`) : undefined;
  const cache: Record<string, SignatureFeatures> = cacheFile && existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : {};
  let images = 0;
  let extractMs = 0;
  const t0 = Date.now();
  for (const w of writers) {
    const all = [...w.genuine.map((s, i) => ({ s, keep: i < RASTERS_KEPT })), ...w.forgeries.map((s) => ({ s, keep: false }))];
    for (const { s, keep } of all) {
      const cached = cache[s.path];
      if (cached && !keep) {
        s.features = cached;
        continue;
      }
      const bytes = new Uint8Array(readFileSync(join(dir, s.path)));
      const decoded = await decodePage(bytes, 0);
      const raster = opts.extract ? await opts.extract.pixels(decoded, s.path) : decoded;
      if (cached) {
        s.features = cached;
      } else {
        const t = performance.now();
        s.features = extractFeatures(core, raster);
        extractMs += performance.now() - t;
        featureVector(s.features);
        cache[s.path] = s.features;
        images++;
      }
      if (keep) s.raster = raster;
    }
    opts.log?.(`\r${basename(dir)}: writer ${w.id} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  opts.log?.("\n");
  if (cacheFile && images > 0) {
    mkdirSync(opts.cacheDir!, { recursive: true });
    writeFileSync(cacheFile, JSON.stringify(cache));
  }
  return { name: basename(dir), folder: dir, writers, images, extractMs };
}
