/** The working copy shared by the template-free locator and the template locator. */
import type { Component } from "./components";
import { binarise, flattenBackground, shrink } from "./morphology";
import type { Box, Raster } from "./types";

/** Long side of the working copy the locators analyse. */
export const WORK_SIDE = 1100;

/** A located box before it gets its page and index. */
export interface Found {
  box: Box;
  confidence: number;
}

/** Working copy of a region: its shrink factor and its ink mask (1 = ink) after flattening the paper. */
export interface InkMask {
  factor: number;
  w: number;
  h: number;
  mask: Uint8Array;
}

/** The shrink factor that brings a region's long side to about WORK_SIDE. */
export function workFactor(region: { w: number; h: number }): number {
  return Math.max(1, Math.round(Math.max(region.w, region.h) / WORK_SIDE));
}

export function inkMask(page: Raster, region: Box, factor = workFactor(region)): InkMask {
  const work = shrink(page, factor, region);
  const long = Math.max(work.width, work.height);
  const flat = flattenBackground(work, Math.max(6, Math.round(long / 150)));
  return { factor, w: work.width, h: work.height, mask: binarise(flat) };
}

/** Map a working-copy box back to page pixels, with a little slack for the shrinking. */
export function toPage(b: Box, m: InkMask, region: Box, page: { width: number; height: number }): Box {
  const pad = Math.ceil(m.factor / 2);
  const x0 = Math.max(region.x, region.x + b.x * m.factor - pad), y0 = Math.max(region.y, region.y + b.y * m.factor - pad);
  const x1 = Math.min(region.x + region.w, page.width, region.x + (b.x + b.w) * m.factor + pad);
  const y1 = Math.min(region.y + region.h, page.height, region.y + (b.y + b.h) * m.factor + pad);
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** The intersection of a box with the page, or null when they do not overlap. */
export function clip(b: Box, page: { width: number; height: number }): Box | null {
  const x0 = Math.max(0, Math.floor(b.x)), y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(page.width, Math.ceil(b.x + b.w)), y1 = Math.min(page.height, Math.ceil(b.y + b.h));
  return x1 - x0 >= 2 && y1 - y0 >= 2 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
}

export function unionBox(cs: Array<{ x: number; y: number; w: number; h: number }>): Box {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const c of cs) {
    x0 = Math.min(x0, c.x);
    y0 = Math.min(y0, c.y);
    x1 = Math.max(x1, c.x + c.w);
    y1 = Math.max(y1, c.y + c.h);
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** A long, thin component touching the frame: the edge of the page in a photo, or a scanner border. */
export function isFrameEdge(c: Component, w: number, h: number): boolean {
  const touches = c.x === 0 || c.y === 0 || c.x + c.w === w || c.y + c.h === h;
  return touches && (c.w > 0.5 * w || c.h > 0.5 * h) && c.area < 0.05 * c.w * c.h + 2 * (c.w + c.h);
}
