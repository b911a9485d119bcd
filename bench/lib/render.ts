// Re-renders a development image as another capture would have produced it: other resolutions, binarised
// or grey scanning, other pens, blur, JPEG, textured paper under uneven light, a slightly rotated sheet,
// light strokes on grey paper, and a final tail drawn longer, shorter or fading, or cut by the box edge.
// Everything works on the grey raster the production decoder returns (0 = ink, 255 = paper) and is
// deterministic: random choices come from a generator seeded by the condition and the image's path.
import { PhotonImage } from "@cf-wasm/photon";
import { decodePage } from "../../src/verify/decode/index";
import { areaResample } from "../../src/verify/resample";
import type { Raster } from "../../src/verify/types";
import { type Rng, rngFor } from "./rng";

export { type Rng, rngFor };

/** The development sets are scanned at about 300 dpi. */
export const SOURCE_DPI = 300;

function gaussian(rng: Rng): number {
  const u = Math.max(1e-12, rng());
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

const clamp8 = (v: number): number => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));

function map(r: Raster, f: (v: number, i: number) => number): Raster {
  const data = new Uint8Array(r.data.length);
  for (let i = 0; i < data.length; i++) data[i] = clamp8(f(r.data[i], i));
  return { width: r.width, height: r.height, data };
}

/** Otsu's threshold: pixels at or below it are ink. */
export function otsu(r: Raster): number {
  const hist = new Float64Array(256);
  for (const v of r.data) hist[v]++;
  const total = r.data.length;
  let sumAll = 0;
  for (let t = 0; t < 256; t++) sumAll += t * hist[t];
  let wB = 0,
    sumB = 0,
    best = -1,
    at = 127;
  for (let t = 0; t < 255; t++) {
    wB += hist[t];
    if (wB === 0) continue;
    const wF = total - wB;
    if (wF === 0) break;
    sumB += t * hist[t];
    const between = wB * wF * (sumB / wB - (sumAll - sumB) / wF) ** 2;
    if (between > best) {
      best = between;
      at = t;
    }
  }
  return at;
}

/** The paper's grey level: the 90th percentile (signature crops are mostly paper). */
function paperLevel(r: Raster): number {
  const hist = new Uint32Array(256);
  for (const v of r.data) hist[v]++;
  let acc = 0;
  for (let t = 0; t < 256; t++) if ((acc += hist[t]) >= 0.9 * r.data.length) return t;
  return 255;
}

/** Columns spanned by ink (Otsu), or null when there is none. */
function inkColumns(r: Raster): { x0: number; x1: number } | null {
  const t = otsu(r);
  let x0 = r.width,
    x1 = -1;
  for (let y = 0; y < r.height; y++) {
    const row = y * r.width;
    for (let x = 0; x < r.width; x++) {
      if (r.data[row + x] <= t) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
      }
    }
  }
  return x1 < 0 ? null : { x0, x1: x1 + 1 };
}

export function resampleToDpi(r: Raster, dpi: number): Raster {
  const s = dpi / SOURCE_DPI;
  return areaResample(r, Math.max(1, Math.round(r.width * s)), Math.max(1, Math.round(r.height * s)));
}

export function binarise(r: Raster): Raster {
  const t = otsu(r);
  return map(r, (v) => (v <= t ? 0 : 255));
}

/** Separable Gaussian blur, edges clamped. */
export function blur(r: Raster, sigma: number): Raster {
  const rad = Math.max(1, Math.ceil(3 * sigma));
  const k: number[] = [];
  let sum = 0;
  for (let i = -rad; i <= rad; i++) {
    const w = Math.exp(-(i * i) / (2 * sigma * sigma));
    k.push(w);
    sum += w;
  }
  for (let i = 0; i < k.length; i++) k[i] /= sum;
  const { width: W, height: H } = r;
  const tmp = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let acc = 0;
      for (let i = -rad; i <= rad; i++) acc += k[i + rad] * r.data[y * W + Math.min(W - 1, Math.max(0, x + i))];
      tmp[y * W + x] = acc;
    }
  const data = new Uint8Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      let acc = 0;
      for (let i = -rad; i <= rad; i++) acc += k[i + rad] * tmp[Math.min(H - 1, Math.max(0, y + i)) * W + x];
      data[y * W + x] = clamp8(acc);
    }
  return { width: W, height: H, data };
}

/**
 * Grey morphology over a 3x3 square: `max` spreads the paper (each stroke loses a pixel on each side:
 * a thinner pen), `min` spreads the ink (a thicker pen).
 */
export function morph3(r: Raster, op: "min" | "max"): Raster {
  const { width: W, height: H } = r;
  const pick = op === "min" ? Math.min : Math.max;
  const pass = (src: Uint8Array, dx: number, dy: number): Uint8Array => {
    const out = new Uint8Array(W * H);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const xa = Math.max(0, x - dx),
          xb = Math.min(W - 1, x + dx),
          ya = Math.max(0, y - dy),
          yb = Math.min(H - 1, y + dy);
        out[y * W + x] = pick(src[ya * W + xa], src[y * W + x], src[yb * W + xb]);
      }
    return out;
  };
  return { width: W, height: H, data: pass(pass(r.data, 1, 0), 0, 1) };
}

/**
 * A grey scan of a binarised original: anti-aliased edges (blur `sigma` px), ink not quite black, paper
 * not quite white. Three strengths: 0.7 px is the suite's `grey`; 0.5 and 1.0 px bracket it, because a
 * scanner's softness varies and a fix placed at one strength must hold on either side of it.
 */
export function greyScan(r: Raster, sigma = 0.7): Raster {
  return map(blur(r, sigma), (v) => 40 + (v * (230 - 40)) / 255);
}

/** The grey raster as a photon image (the caller frees it). */
function photonOf(r: Raster): PhotonImage {
  const rgba = new Uint8Array(r.width * r.height * 4);
  for (let i = 0, j = 0; i < r.data.length; i++, j += 4) {
    rgba[j] = rgba[j + 1] = rgba[j + 2] = r.data[i];
    rgba[j + 3] = 255;
  }
  return new PhotonImage(rgba, r.width, r.height);
}

/** Round trip through a JPEG at this quality (photon's encoder, the production decoder). */
export async function jpegRoundTrip(r: Raster, quality: number): Promise<Raster> {
  const img = photonOf(r);
  let bytes: Uint8Array;
  try {
    bytes = img.get_bytes_jpeg(quality);
  } finally {
    img.free();
  }
  return decodePage(bytes, 0);
}

/** The grey raster as a PNG file (previews and diagnostics). */
export function toPng(r: Raster): Uint8Array {
  const img = photonOf(r);
  try {
    return img.get_bytes();
  } finally {
    img.free();
  }
}

/**
 * Textured paper under uneven light: fine grain (sigma 6 grey levels), coarse fibre blotches (+-10,
 * smooth over 24 px), and a light falloff to 72% across the sheet in a random direction.
 */
export function paperAndLight(r: Raster, rng: Rng): Raster {
  const { width: W, height: H } = r;
  const cell = 24;
  const gw = Math.ceil(W / cell) + 2,
    gh = Math.ceil(H / cell) + 2;
  const coarse = Float32Array.from({ length: gw * gh }, () => 10 * (2 * rng() - 1));
  const angle = 2 * Math.PI * rng();
  const dx = Math.cos(angle),
    dy = Math.sin(angle);
  // Project the corners to find the span of the gradient along its direction.
  const proj = [0, W * dx, H * dy, W * dx + H * dy];
  const lo = Math.min(...proj),
    span = Math.max(...proj) - lo || 1;
  return map(r, (v, i) => {
    const x = i % W,
      y = (i - x) / W;
    const gx = x / cell,
      gy = y / cell;
    const ix = Math.floor(gx),
      iy = Math.floor(gy);
    const fx = gx - ix,
      fy = gy - iy;
    const c =
      coarse[iy * gw + ix] * (1 - fx) * (1 - fy) +
      coarse[iy * gw + ix + 1] * fx * (1 - fy) +
      coarse[(iy + 1) * gw + ix] * (1 - fx) * fy +
      coarse[(iy + 1) * gw + ix + 1] * fx * fy;
    const light = 1 - 0.28 * ((x * dx + y * dy - lo) / span);
    return (v + c + 6 * gaussian(rng)) * light;
  });
}

/**
 * A shadow's edge across the crop (a hand or a phone held over the sheet): the side of a random line
 * through the crop's middle half darkened to 65%, with an 8 px penumbra. Unlike `paper+light` the light
 * changes within a few pixels, somewhere inside the signature.
 */
export function shadowEdge(r: Raster, rng: Rng): Raster {
  const { width: W } = r;
  const angle = 2 * Math.PI * rng();
  const nx = Math.cos(angle),
    ny = Math.sin(angle);
  const px = W * (0.25 + 0.5 * rng()),
    py = r.height * (0.25 + 0.5 * rng());
  return map(r, (v, i) => {
    const x = i % W,
      y = (i - x) / W;
    const t = Math.min(1, Math.max(0, ((x - px) * nx + (y - py) * ny) / 8 + 0.5));
    return v * (1 - 0.35 * t);
  });
}

/** Rotation about the centre by `degrees`, bilinear, on a canvas grown to hold the whole sheet (paper fill). */
export function rotate(r: Raster, degrees: number): Raster {
  const a = (degrees * Math.PI) / 180;
  const cos = Math.cos(a),
    sin = Math.sin(a);
  const { width: w, height: h } = r;
  const W = Math.ceil(Math.abs(w * cos) + Math.abs(h * sin));
  const H = Math.ceil(Math.abs(w * sin) + Math.abs(h * cos));
  const paper = paperLevel(r);
  const data = new Uint8Array(W * H);
  const cx = w / 2,
    cy = h / 2,
    CX = W / 2,
    CY = H / 2;
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= w || y >= h ? paper : r.data[y * w + x]);
  for (let Y = 0; Y < H; Y++)
    for (let X = 0; X < W; X++) {
      // Inverse map: the source point that lands here.
      const u = X + 0.5 - CX,
        v = Y + 0.5 - CY;
      const sx = cos * u + sin * v + cx - 0.5,
        sy = -sin * u + cos * v + cy - 0.5;
      const x0 = Math.floor(sx),
        y0 = Math.floor(sy);
      const fx = sx - x0,
        fy = sy - y0;
      data[Y * W + X] = clamp8(
        at(x0, y0) * (1 - fx) * (1 - fy) + at(x0 + 1, y0) * fx * (1 - fy) + at(x0, y0 + 1) * (1 - fx) * fy + at(x0 + 1, y0 + 1) * fx * fy,
      );
    }
  return { width: W, height: H, data };
}

/** A light, thin pen on grey paper: strokes thinned by a pixel, ink at grey 130 on paper at grey 200. */
export function lightThinOnGrey(r: Raster): Raster {
  return map(morph3(r, "max"), (v) => 130 + (v * (200 - 130)) / 255);
}

/**
 * The final tail or flourish drawn longer (factor > 1) or shorter (< 1): the rightmost `share` of the
 * ink's columns is stretched or compressed horizontally (linear interpolation); what lies right of it moves.
 */
export function scaleTail(r: Raster, factor: number, share = 0.2): Raster {
  const ink = inkColumns(r);
  if (!ink) return r;
  const a = ink.x1 - Math.round(share * (ink.x1 - ink.x0));
  const inkSeg = ink.x1 - a;
  const grown = Math.round(inkSeg * factor) - inkSeg;
  const W = Math.max(a + 1, r.width + grown);
  const data = new Uint8Array(W * r.height);
  for (let X = 0; X < W; X++) {
    // Source column: identity left of the tail, scaled inside it, shifted right of it.
    let sx: number;
    if (X < a) sx = X;
    else if (X < a + inkSeg + grown) sx = a + (X - a) / factor;
    else sx = X - grown;
    sx = Math.min(r.width - 1, Math.max(0, sx));
    const x0 = Math.floor(sx),
      x1 = Math.min(r.width - 1, x0 + 1),
      f = sx - x0;
    for (let y = 0; y < r.height; y++) data[y * W + X] = clamp8(r.data[y * r.width + x0] * (1 - f) + r.data[y * r.width + x1] * f);
  }
  return { width: W, height: r.height, data };
}

/**
 * A final flourish that fades: over the rightmost `share` of the ink's columns the ink's contrast against
 * the paper falls linearly from full to `faint` of it (a pen running dry or lifting, a light stroke that
 * the scanner barely keeps). Its length is unchanged; how much of it survives is what varies.
 */
export function fadeTail(r: Raster, faint = 0.3, share = 0.3): Raster {
  const ink = inkColumns(r);
  if (!ink) return r;
  const paper = paperLevel(r);
  const a = ink.x1 - Math.round(share * (ink.x1 - ink.x0));
  const span = Math.max(1, ink.x1 - a);
  return map(r, (v, i) => {
    const x = i % r.width;
    if (x < a || v >= paper) return v;
    const keep = 1 - (1 - faint) * Math.min(1, (x - a) / span);
    return paper - (paper - v) * keep;
  });
}

/** The box edge cuts the signature: everything right of (1 - share) of the ink's width is gone. */
export function cropTail(r: Raster, share = 0.13): Raster {
  const ink = inkColumns(r);
  if (!ink) return r;
  const W = Math.max(1, ink.x1 - Math.round(share * (ink.x1 - ink.x0)));
  const data = new Uint8Array(W * r.height);
  for (let y = 0; y < r.height; y++) data.set(r.data.subarray(y * r.width, y * r.width + W), y * W);
  return { width: W, height: r.height, data };
}

export interface Condition {
  name: string;
  /** What it stands for, for the table's legend and the docs. */
  about: string;
  /**
   * Also scored with the references rendered the same way: a capture condition (scanner, camera, paper) that
   * a customer's whole pipeline shares, or a writer's own habit (a pen, a flourish that always fades) that
   * their references share too. The others vary from one signature to the next, so only the questioned side
   * is rendered.
   */
  both: boolean;
  render: (r: Raster, rng: Rng) => Raster | Promise<Raster>;
}

export const CONDITIONS: Condition[] = [
  { name: "dpi200", about: "resampled to 200 dpi (area average)", both: true, render: (r) => resampleToDpi(r, 200) },
  { name: "dpi150", about: "resampled to 150 dpi (area average)", both: true, render: (r) => resampleToDpi(r, 150) },
  { name: "binarised", about: "Otsu threshold to black and white", both: true, render: binarise },
  { name: "grey", about: "grey scan: blur sigma 0.7 px, ink 40, paper 230", both: true, render: (r) => greyScan(r) },
  { name: "grey-soft", about: "grey scan as `grey`, blur sigma 0.5 px", both: true, render: (r) => greyScan(r, 0.5) },
  { name: "grey-hard", about: "grey scan as `grey`, blur sigma 1.0 px", both: true, render: (r) => greyScan(r, 1.0) },
  { name: "blur", about: "Gaussian blur sigma 1.5 px", both: true, render: (r) => blur(r, 1.5) },
  {
    name: "jpeg50",
    about: "JPEG quality 50 round trip (photon encode, production decode)",
    both: true,
    render: (r) => jpegRoundTrip(r, 50),
  },
  {
    name: "paper+light",
    about: "paper grain and fibre blotches, light falling to 72% across the sheet",
    both: true,
    render: paperAndLight,
  },
  { name: "thin-pen", about: "strokes 2 px thinner (3x3 grey max)", both: true, render: (r) => morph3(r, "max") },
  { name: "thick-pen", about: "strokes 2 px thicker (3x3 grey min)", both: true, render: (r) => morph3(r, "min") },
  {
    name: "rotated",
    about: "rotated 2 to 3 degrees either way (bilinear, paper fill)",
    both: false,
    render: (r, rng) => rotate(r, (rng() < 0.5 ? -1 : 1) * (2 + rng())),
  },
  { name: "light-thin", about: "thin light strokes (ink 130) on grey paper (200)", both: true, render: lightThinOnGrey },
  { name: "tail-longer", about: "rightmost 20% of the ink stretched to 150%", both: false, render: (r) => scaleTail(r, 1.5) },
  { name: "tail-shorter", about: "rightmost 20% of the ink compressed to 60%", both: false, render: (r) => scaleTail(r, 0.6) },
  { name: "tail-cropped", about: "cut at the box edge: last 13% of the ink's width gone", both: false, render: (r) => cropTail(r) },
  {
    name: "faint-tail",
    about: "rightmost 30% of the ink fading to 30% of its contrast",
    both: true,
    render: (r) => fadeTail(r),
  },
  { name: "shadow", about: "a shadow's edge through the signature: one side at 65% light, 8 px penumbra", both: true, render: shadowEdge },
];
