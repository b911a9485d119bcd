/**
 * Templates: a blank form whose signature boxes are known. Locating with a template registers the page
 * to the blank, subtracts the blank's print, and takes the new ink in (and just around) each box.
 *
 * Registration (registration.ts) matches the print's keypoints, so the template keeps those; and for
 * each box, the blank's own ink around it, to subtract.
 *
 * The model is plain JSON so it can be stored with the template.
 */
import { classifyPage, Kind } from "./classify";
import { labelComponents } from "./components";
import { extractKeypoints, register } from "./registration";
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

/** A signature found in a template's box: `zone` is the index of the box in `TemplateModel.boxes`. */
export interface TemplateFound extends Found {
  zone: number;
}

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
    if (!c || c.w < 8 || c.h < 8)
      throw new RangeError(`boxes[${i}] does not cover at least 8x8 pixels of the ${blank.width}x${blank.height} blank page`);
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
  return {
    version: 1,
    width: blank.width,
    height: blank.height,
    boxes: boxes.map((b) => ({ ...b })),
    factor: m.factor,
    keypoints: kept,
    zones,
  };
}

/** Working-copy rectangle around a box: signers overflow boxes, more in height than in width. */
function zoneAround(b: Box, m: InkMask): Box {
  const x = b.x / m.factor,
    y = b.y / m.factor,
    w = b.w / m.factor,
    h = b.h / m.factor;
  const mx = 0.1 * w + 4,
    my = 0.3 * h + 4;
  const x0 = Math.max(0, Math.floor(x - mx)),
    y0 = Math.max(0, Math.floor(y - my));
  const x1 = Math.min(m.w, Math.ceil(x + w + mx)),
    y1 = Math.min(m.h, Math.ceil(y + h + my));
  return { x: x0, y: y0, w: Math.max(1, x1 - x0), h: Math.max(1, y1 - y0) };
}

/**
 * Locate signatures on a filled page with a template. Returns null when the page cannot be registered
 * to the blank (then the caller falls back to locating without the template). Only boxes that meet
 * `region` are reported, clipped to it.
 */
export function locateWithTemplate(page: Raster, template: TemplateModel, region: Box): TemplateFound[] | null {
  const ratio = page.width / template.width;
  const factor = Math.max(1, Math.round(template.factor * ratio));
  const whole = { x: 0, y: 0, w: page.width, h: page.height };
  const prior = (template.factor * ratio) / factor;
  let m = inkMask(page, whole, { factor });
  let reg = register(template.keypoints, extractKeypoints(m), prior, Math.max(m.w, m.h));
  if (!reg) {
    // A phone photo's sensor noise, strongest where the light is poor, bridges and breaks the print's
    // letters, so its keypoints no longer match the blank's. A 3x3 median takes the noise out and keeps
    // the strokes; it is only paid for when the plain reading did not register.
    m = inkMask(median3(page), whole, { factor });
    reg = register(template.keypoints, extractKeypoints(m), prior, Math.max(m.w, m.h));
  }
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
  const out: TemplateFound[] = [];
  template.zones.forEach((zone, k) => {
    const blank = unpackBits(zone.bits, zone.w * zone.h);
    const fresh = new Uint8Array(zone.w * zone.h);
    for (let v = 0; v < zone.h; v++) {
      const y = zone.y + v + 0.5;
      for (let u = 0; u < zone.w; u++) {
        const i = v * zone.w + u;
        if (blank[i]) continue;
        const x = zone.x + u + 0.5;
        const px = Math.floor(t.a * x - t.b * y + t.tx),
          py = Math.floor(t.b * x + t.a * y + t.ty);
        if (px < 0 || py < 0 || px >= m.w || py >= m.h) continue;
        if (!raw[py * m.w + px]) continue;
        const [lx, ly] = turn(level, px + 0.5, py + 0.5);
        const qx = Math.floor(lx),
          qy = Math.floor(ly);
        const label = qx >= 0 && qy >= 0 && qx < level.w && qy < level.h ? cls.labels[qy * level.w + qx] : 0;
        if (!excluded[label]) fresh[i] = 1;
      }
    }
    const tb = template.boxes[k];
    const inZone = {
      x: tb.x / template.factor - zone.x,
      y: tb.y / template.factor - zone.y,
      w: tb.w / template.factor,
      h: tb.h / template.factor,
    };
    const found = newInk(fresh, zone.w, zone.h, inZone);
    if (!found) return;
    // Box corners from the zone frame, through the transform, to page pixels.
    const corners = [
      [found.box.x, found.box.y],
      [found.box.x + found.box.w, found.box.y],
      [found.box.x, found.box.y + found.box.h],
      [found.box.x + found.box.w, found.box.y + found.box.h],
    ].map(([u, v]) => {
      const x = zone.x + u,
        y = zone.y + v;
      return [(t.a * x - t.b * y + t.tx) * factor, (t.b * x + t.a * y + t.ty) * factor];
    });
    const xs = corners.map((c) => c[0]),
      ys = corners.map((c) => c[1]);
    const x0 = Math.min(...xs),
      y0 = Math.min(...ys);
    const box = clip({ x: x0 - 1, y: y0 - 1, w: Math.max(...xs) - x0 + 2, h: Math.max(...ys) - y0 + 2 }, page);
    if (!box) return;
    const inRegion = clip(intersect(box, region), page);
    if (!inRegion) return;
    out.push({ box: inRegion, confidence: Math.min(1, found.confidence * (0.6 + 0.8 * reg.support)), zone: k });
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
    const thin = Math.min(c.w, c.h),
      len = Math.max(c.w, c.h);
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
  const x0 = Math.max(a.x, b.x),
    y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.w, b.x + b.w),
    y1 = Math.min(a.y + a.h, b.y + b.h);
  return { x: x0, y: y0, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** 3x3 median of a grey raster (edges replicated), by a 19-exchange sorting network per pixel. */
export function median3(r: Raster): Raster {
  const { width: w, height: h, data: d } = r;
  const out = new Uint8Array(d.length);
  const v = new Int32Array(9);
  const swap = (a: number, b: number) => {
    if (v[a] > v[b]) {
      const t = v[a];
      v[a] = v[b];
      v[b] = t;
    }
  };
  for (let y = 0; y < h; y++) {
    const up = (y > 0 ? y - 1 : y) * w,
      mid = y * w,
      down = (y < h - 1 ? y + 1 : y) * w;
    for (let x = 0; x < w; x++) {
      const l = x > 0 ? x - 1 : x,
        rr = x < w - 1 ? x + 1 : x;
      v[0] = d[up + l];
      v[1] = d[up + x];
      v[2] = d[up + rr];
      v[3] = d[mid + l];
      v[4] = d[mid + x];
      v[5] = d[mid + rr];
      v[6] = d[down + l];
      v[7] = d[down + x];
      v[8] = d[down + rr];
      swap(1, 2);
      swap(4, 5);
      swap(7, 8);
      swap(0, 1);
      swap(3, 4);
      swap(6, 7);
      swap(1, 2);
      swap(4, 5);
      swap(7, 8);
      swap(0, 3);
      swap(5, 8);
      swap(4, 7);
      swap(3, 6);
      swap(1, 4);
      swap(2, 5);
      swap(4, 7);
      swap(4, 2);
      swap(6, 4);
      swap(4, 2);
      out[mid + x] = v[4];
    }
  }
  return { width: w, height: h, data: out };
}

/** Square dilation of a 0/1 mask by r pixels (separable running max over runs). */
function dilate(mask: Uint8Array, w: number, h: number, r: number): Uint8Array {
  const tmp = new Uint8Array(mask.length),
    out = new Uint8Array(mask.length);
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
