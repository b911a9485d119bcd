/**
 * Templates: a blank form whose signature boxes are known. Locating with a template registers the page
 * to the blank, subtracts the blank's print, and takes the new ink in (and just around) each box.
 *
 * Registration matches keypoints: the centroids of the blank's printed components (words, rules, logos),
 * described by their area and length, which survive shift, rotation and mild rescaling. A random
 * sample of candidate pairs proposes a similarity transform (shift, rotation, scale), the one most
 * keypoints agree with wins, and a least-squares fit over those refines it. A filled page adds ink
 * (signatures, dates) but keeps most of the print, so most keypoints still match.
 *
 * The model is plain JSON so it can be stored with the template.
 */
import { classifyPage, Kind } from "./classify";
import { labelComponents } from "./components";
import { clip, inkMask, levelled, turn, unionBox, type Found, type InkMask } from "./ink-mask";
import type { Box, Raster } from "./types";

export interface TemplateZone {
  /** Rectangle in working-copy pixels around one signature box. */
  x: number;
  y: number;
  w: number;
  h: number;
  /** The blank's ink there, thickened to forgive small registration errors: packed bits, row-major, base64. */
  bits: string;
}

export interface TemplateModel {
  version: 1;
  /** Size of the blank page in pixels. */
  width: number;
  height: number;
  /** Signature boxes in blank-page pixels. */
  boxes: Box[];
  /** Shrink factor from the blank page to the working copy that keypoints and zones are measured on. */
  factor: number;
  /** Keypoints of the blank's print in working-copy pixels, four numbers each: x, y, w, h of a component (centroid, box size). */
  keypoints: number[];
  /** One zone per box, in the same order. */
  zones: TemplateZone[];
}

/** Share of the template's keypoints a registration must explain; chance alignments of other forms stay near 0.3. */
const MIN_SUPPORT = 0.5;
/** Most keypoints kept in a template; more add JSON without improving registration. */
const MAX_KEYPOINTS = 900;
/** How far (working pixels) the blank's ink is thickened before subtraction. */
const BLANK_SLACK = 2;

/**
 * Build a template from a blank form and its signature boxes (blank-page pixels). Boxes are clipped to
 * the page; a box with no area on it is refused with a RangeError naming it (the caller validates
 * input first and turns this into a 400).
 */
export function buildTemplate(blank: Raster, boxes: Box[]): TemplateModel {
  const page = { x: 0, y: 0, w: blank.width, h: blank.height };
  boxes = boxes.map((b, i) => {
    const c = clip(b, blank);
    if (!c || c.w < 8 || c.h < 8) throw new RangeError(`boxes[${i}] does not cover at least 8x8 pixels of the ${blank.width}x${blank.height} blank page`);
    return c;
  });
  const m = inkMask(blank, page);
  const keypoints = extractKeypoints(m);
  let kept = keypoints;
  if (keypoints.length / 4 > MAX_KEYPOINTS) {
    kept = [];
    const step = keypoints.length / 4 / MAX_KEYPOINTS;
    for (let k = 0; k < MAX_KEYPOINTS; k++) kept.push(...keypoints.slice(Math.floor(k * step) * 4, Math.floor(k * step) * 4 + 4));
  }
  const thick = dilate(m.mask, m.w, m.h, BLANK_SLACK);
  const zones = boxes.map((b) => {
    const z = zoneAround(b, m);
    return { ...z, bits: packBits(thick, m.w, z) };
  });
  return { version: 1, width: blank.width, height: blank.height, boxes: boxes.map((b) => ({ ...b })), factor: m.factor, keypoints: kept, zones };
}

/** Working-copy rectangle around a box: signers overflow boxes, more in height than in width. */
function zoneAround(b: Box, m: InkMask): Box {
  const x = b.x / m.factor, y = b.y / m.factor, w = b.w / m.factor, h = b.h / m.factor;
  const mx = 0.1 * w + 4, my = 0.3 * h + 4;
  const x0 = Math.max(0, Math.floor(x - mx)), y0 = Math.max(0, Math.floor(y - my));
  const x1 = Math.min(m.w, Math.ceil(x + w + mx)), y1 = Math.min(m.h, Math.ceil(y + h + my));
  return { x: x0, y: y0, w: Math.max(1, x1 - x0), h: Math.max(1, y1 - y0) };
}

/** Centroids and sizes of print-sized components: words, numbers, marks. Long rules and big blocks are left out. */
function extractKeypoints(m: InkMask): number[] {
  const long = Math.max(m.w, m.h);
  const { components } = labelComponents(m.mask, m.w, m.h, 6);
  const out: number[] = [];
  for (const c of components) {
    if (Math.max(c.w, c.h) > 0.12 * long || Math.min(c.w, c.h) < 2) continue;
    out.push(c.cx, c.cy, c.w, c.h);
  }
  return out;
}

/** A similarity transform: x' = a x - b y + tx, y' = b x + a y + ty. */
export interface Similarity {
  a: number;
  b: number;
  tx: number;
  ty: number;
}

export interface Registration {
  /** From template working pixels to page working pixels. */
  transform: Similarity;
  inliers: number;
  /** Share of the template's usable keypoints that agree. */
  support: number;
}

/**
 * Register a page's keypoints to the template's. `prior` is the expected scale (page working pixels per
 * template working pixel). Returns null when too few keypoints agree on any transform.
 */
export function register(tk: number[], pk: number[], prior: number, long: number, seed = 1): Registration | null {
  const nt = tk.length / 4, np = pk.length / 4;
  if (nt < 6 || np < 6) return null;
  // Page keypoints in a coarse grid so candidates near an expected position are found quickly.
  const cell = Math.max(16, Math.round(long / 40));
  const grid = new Map<number, number[]>();
  const key = (gx: number, gy: number) => gy * 100003 + gx;
  for (let j = 0; j < np; j++) {
    const k = key(Math.floor(pk[4 * j] / cell), Math.floor(pk[4 * j + 1] / cell));
    const l = grid.get(k);
    if (l) l.push(j);
    else grid.set(k, [j]);
  }
  const reach = 0.15 * long;
  const similar = (i: number, j: number) => {
    const tw = tk[4 * i + 2] * prior, th = tk[4 * i + 3] * prior, pw = pk[4 * j + 2], ph = pk[4 * j + 3];
    // A few degrees of rotation lengthens the short side of a long word by a few pixels.
    return Math.abs(tw - pw) <= 0.12 * tw + 0.06 * th + 2 && Math.abs(th - ph) <= 0.12 * th + 0.06 * tw + 2;
  };
  const cands: number[][] = [];
  for (let i = 0; i < nt; i++) {
    const ex = tk[4 * i] * prior, ey = tk[4 * i + 1] * prior;
    const list: number[] = [];
    for (let gy = Math.floor((ey - reach) / cell); gy <= Math.floor((ey + reach) / cell); gy++) {
      for (let gx = Math.floor((ex - reach) / cell); gx <= Math.floor((ex + reach) / cell); gx++) {
        for (const j of grid.get(key(gx, gy)) ?? []) {
          if (Math.abs(pk[4 * j] - ex) <= reach && Math.abs(pk[4 * j + 1] - ey) <= reach && similar(i, j)) list.push(j);
        }
      }
    }
    // Crowded print can offer hundreds; a sample of them is enough to verify against.
    cands.push(list.length > 300 ? list.filter((_, k) => k % Math.ceil(list.length / 300) === 0) : list);
  }
  const usable = cands.map((l, i) => (l.length > 0 && l.length <= 80 ? i : -1)).filter((i) => i >= 0);
  if (usable.length < 6) return null;
  // Sample pairs from the more distinctive keypoints (fewer candidates), where a guess is more often right.
  const distinctive = [...usable].sort((x, y) => cands[x].length - cands[y].length).slice(0, Math.max(12, usable.length >> 1));
  const tol = Math.max(2.5, 0.004 * long);
  const probe = usable.length > 120 ? usable.filter((_, k) => k % Math.ceil(usable.length / 120) === 0) : usable;
  const count = (t: Similarity, set: number[], limit: number) => {
    let n = 0;
    for (const i of set) {
      const x = tk[4 * i], y = tk[4 * i + 1];
      const px = t.a * x - t.b * y + t.tx, py = t.b * x + t.a * y + t.ty;
      for (const j of cands[i]) {
        const dx = pk[4 * j] - px, dy = pk[4 * j + 1] - py;
        if (dx * dx + dy * dy <= limit * limit) {
          n++;
          break;
        }
      }
    }
    return n;
  };
  let state = (seed * 2654435761) >>> 0 || 1;
  const rand = (n: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  const minSpan = 0.12 * long;
  let best: Similarity | null = null, bestScore = 0;
  for (let it = 0; it < 12000; it++) {
    const i = distinctive[rand(distinctive.length)], k = distinctive[rand(distinctive.length)];
    if (i === k) continue;
    const x1 = tk[4 * i], y1 = tk[4 * i + 1], x2 = tk[4 * k], y2 = tk[4 * k + 1];
    const dx = x2 - x1, dy = y2 - y1;
    const d = Math.hypot(dx, dy);
    if (d < minSpan) continue;
    const j = cands[i][rand(cands[i].length)], l = cands[k][rand(cands[k].length)];
    const ex = pk[4 * l] - pk[4 * j], ey = pk[4 * l + 1] - pk[4 * j + 1];
    const s = Math.hypot(ex, ey) / d;
    if (Math.abs(s / prior - 1) > 0.1) continue;
    const rot = Math.atan2(ey, ex) - Math.atan2(dy, dx);
    const ang = Math.atan2(Math.sin(rot), Math.cos(rot));
    if (Math.abs(ang) > (6 * Math.PI) / 180) continue;
    const a = s * Math.cos(ang), b = s * Math.sin(ang);
    const t = { a, b, tx: pk[4 * j] - (a * x1 - b * y1), ty: pk[4 * j + 1] - (b * x1 + a * y1) };
    const score = count(t, probe, tol);
    if (score > bestScore) {
      bestScore = score;
      best = t;
      if (score > 0.6 * probe.length) break;
    }
  }
  if (!best) return null;
  // Refine on every agreeing keypoint, twice, tightening as the fit improves.
  for (const limit of [tol * 1.5, tol]) {
    const pairs = matchPairs(best, tk, pk, usable, cands, limit);
    if (pairs.length >= 3) best = fitSimilarity(pairs);
  }
  // Judge on every keypoint that has candidates, crowded ones included: a wrong transform still lands
  // near some word by chance in dense print, but only the right one lands near most of them.
  const all = cands.map((l, i) => (l.length > 0 ? i : -1)).filter((i) => i >= 0);
  const inliers = count(best, all, tol);
  const support = inliers / all.length;
  if (inliers < 12 || support < MIN_SUPPORT) return null;
  return { transform: best, inliers, support };
}

function matchPairs(t: Similarity, tk: number[], pk: number[], set: number[], cands: number[][], limit: number): number[][] {
  const pairs: number[][] = [];
  for (const i of set) {
    const x = tk[4 * i], y = tk[4 * i + 1];
    const px = t.a * x - t.b * y + t.tx, py = t.b * x + t.a * y + t.ty;
    let bestJ = -1, bestD = limit * limit;
    for (const j of cands[i]) {
      const d = (pk[4 * j] - px) ** 2 + (pk[4 * j + 1] - py) ** 2;
      if (d <= bestD) {
        bestD = d;
        bestJ = j;
      }
    }
    if (bestJ >= 0) pairs.push([x, y, pk[4 * bestJ], pk[4 * bestJ + 1]]);
  }
  return pairs;
}

/** Least-squares similarity from point pairs [x, y, x', y']. */
function fitSimilarity(pairs: number[][]): Similarity {
  let mx = 0, my = 0, mu = 0, mv = 0;
  for (const [x, y, u, v] of pairs) {
    mx += x;
    my += y;
    mu += u;
    mv += v;
  }
  const n = pairs.length;
  mx /= n;
  my /= n;
  mu /= n;
  mv /= n;
  let sxx = 0, sab = 0, sba = 0;
  for (const [x, y, u, v] of pairs) {
    const X = x - mx, Y = y - my, U = u - mu, V = v - mv;
    sxx += X * X + Y * Y;
    sab += X * U + Y * V;
    sba += X * V - Y * U;
  }
  const a = sab / sxx, b = sba / sxx;
  return { a, b, tx: mu - (a * mx - b * my), ty: mv - (b * mx + a * my) };
}

/**
 * Locate signatures on a filled page with a template. Returns null when the page cannot be registered
 * to the blank (then the caller falls back to locating without the template). Only boxes that meet
 * `region` are reported, clipped to it.
 */
export function locateWithTemplate(page: Raster, template: TemplateModel, region: Box): Found[] | null {
  const ratio = page.width / template.width;
  const factor = Math.max(1, Math.round(template.factor * ratio));
  const m = inkMask(page, { x: 0, y: 0, w: page.width, h: page.height }, { factor });
  const prior = (template.factor * ratio) / factor;
  const reg = register(template.keypoints, extractKeypoints(m), prior, Math.max(m.w, m.h));
  if (!reg) return null;
  const t = reg.transform;
  // New ink that is not a signature (a stamp, a new rule) is recognised on the page as a whole, levelled
  // by the rotation registration found so that rules read as rules.
  const raw = m.mask.slice();
  const skew = Math.atan2(t.b, t.a);
  const level = levelled(m, skew);
  const cls = classifyPage(level);
  const excluded = new Uint8Array(cls.labelCount + 1);
  cls.components.forEach((c, i) => {
    if (cls.kinds[i] === Kind.Stamp || cls.kinds[i] === Kind.Line) excluded[c.id] = 1;
  });
  const out: Found[] = [];
  template.zones.forEach((zone, k) => {
    const blank = unpackBits(zone.bits, zone.w * zone.h);
    const fresh = new Uint8Array(zone.w * zone.h);
    for (let v = 0; v < zone.h; v++) {
      const y = zone.y + v + 0.5;
      for (let u = 0; u < zone.w; u++) {
        const i = v * zone.w + u;
        if (blank[i]) continue;
        const x = zone.x + u + 0.5;
        const px = Math.floor(t.a * x - t.b * y + t.tx), py = Math.floor(t.b * x + t.a * y + t.ty);
        if (px < 0 || py < 0 || px >= m.w || py >= m.h) continue;
        if (!raw[py * m.w + px]) continue;
        const [lx, ly] = turn(level, px + 0.5, py + 0.5);
        const qx = Math.floor(lx), qy = Math.floor(ly);
        const label = qx >= 0 && qy >= 0 && qx < level.w && qy < level.h ? cls.labels[qy * level.w + qx] : 0;
        if (!excluded[label]) fresh[i] = 1;
      }
    }
    const tb = template.boxes[k];
    const inZone = { x: tb.x / template.factor - zone.x, y: tb.y / template.factor - zone.y, w: tb.w / template.factor, h: tb.h / template.factor };
    const found = newInk(fresh, zone.w, zone.h, inZone);
    if (!found) return;
    // Box corners from the zone frame, through the transform, to page pixels.
    const corners = [
      [found.box.x, found.box.y],
      [found.box.x + found.box.w, found.box.y],
      [found.box.x, found.box.y + found.box.h],
      [found.box.x + found.box.w, found.box.y + found.box.h],
    ].map(([u, v]) => {
      const x = zone.x + u, y = zone.y + v;
      return [(t.a * x - t.b * y + t.tx) * factor, (t.b * x + t.a * y + t.ty) * factor];
    });
    const xs = corners.map((c) => c[0]), ys = corners.map((c) => c[1]);
    const x0 = Math.min(...xs), y0 = Math.min(...ys);
    const box = clip({ x: x0 - 1, y: y0 - 1, w: Math.max(...xs) - x0 + 2, h: Math.max(...ys) - y0 + 2 }, page);
    if (!box) return;
    const inRegion = clip(intersect(box, region), page);
    if (!inRegion) return;
    out.push({ box: inRegion, confidence: Math.min(1, found.confidence * (0.6 + 0.8 * reg.support)) });
  });
  return out;
}

/**
 * The new ink in a zone, if there is enough of it to be a signature: pieces that touch the template's
 * box, then pieces near those (a flourish running out of the box), as one box in zone pixels.
 */
function newInk(fresh: Uint8Array, w: number, h: number, box: Box): Found | null {
  const { components } = labelComponents(fresh, w, h, 4);
  // Residue of the blank's rules and print where registration is a pixel off: thin slivers and specks.
  const pieces = components.filter((c) => {
    const thin = Math.min(c.w, c.h), len = Math.max(c.w, c.h);
    return !(thin <= 2 && len >= 6 * thin) && c.area >= 8;
  });
  const meets = (c: { x: number; y: number; w: number; h: number }, b: Box, mx: number, my: number) =>
    c.x < b.x + b.w + mx && c.x + c.w > b.x - mx && c.y < b.y + b.h + my && c.y + c.h > b.y - my;
  const kept = pieces.filter((c) => meets(c, box, 0, 0));
  if (kept.length === 0) return null;
  for (let grown = true; grown; ) {
    grown = false;
    const b = unionBox(kept);
    for (const c of pieces) {
      if (!kept.includes(c) && meets(c, b, 0.3 * b.h, 0.15 * b.h)) {
        kept.push(c);
        grown = true;
      }
    }
  }
  const ink = kept.reduce((s, c) => s + c.area, 0);
  const largest = kept.reduce((s, c) => Math.max(s, Math.max(c.w, c.h)), 0);
  if (ink < Math.max(30, 0.004 * box.w * box.h) || largest < 0.12 * Math.min(box.w, box.h * 2)) return null;
  return { box: unionBox(kept), confidence: Math.min(1, 0.5 + ink / (0.04 * box.w * box.h)) };
}

function intersect(a: Box, b: Box): Box {
  const x0 = Math.max(a.x, b.x), y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.w, b.x + b.w), y1 = Math.min(a.y + a.h, b.y + b.h);
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** Square dilation of a 0/1 mask by r pixels (separable running max over runs). */
function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const tmp = new Uint8Array(mask.length), out = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++) {
    let last = -Infinity;
    const row = y * w;
    for (let x = 0; x < w + r; x++) {
      if (x < w && mask[row + x]) last = x;
      const at = x - r;
      if (at >= 0 && at < w && x - last <= 2 * r) tmp[row + at] = 1;
    }
  }
  for (let x = 0; x < w; x++) {
    let last = -Infinity;
    for (let y = 0; y < h + r; y++) {
      if (y < h && tmp[y * w + x]) last = y;
      const at = y - r;
      if (at >= 0 && at < h && y - last <= 2 * r) out[at * w + x] = 1;
    }
  }
  return out;
}

function packBits(mask: Uint8Array, w: number, z: Box): string {
  const bytes = new Uint8Array(Math.ceil((z.w * z.h) / 8));
  let k = 0;
  for (let y = z.y; y < z.y + z.h; y++) {
    for (let x = z.x; x < z.x + z.w; x++, k++) if (mask[y * w + x]) bytes[k >> 3] |= 1 << (k & 7);
  }
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function unpackBits(b64: string, n: number): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(n);
  for (let k = 0; k < n; k++) out[k] = (s.charCodeAt(k >> 3) >> (k & 7)) & 1;
  return out;
}
