/**
 * Registering a page to a blank form by keypoints: the centroids of printed components (words, marks),
 * described by their box size, which survive shift, rotation and mild rescaling. Random pairs of
 * candidate matches propose a similarity transform (shift, rotation, scale); the one most keypoints
 * agree with wins and a least-squares fit over those refines it. A filled page adds ink (signatures,
 * dates, a stamp) but keeps most of the print, so most keypoints still match; another form does not.
 */
import { labelComponents } from "./components";
import type { InkMask } from "./ink-mask";

/** Share of the template's keypoints a registration must explain; chance alignments of other forms stay near 0.3. */
const MIN_SUPPORT = 0.5;

/** Centroids and sizes of print-sized components: words, numbers, marks. Long rules and big blocks are left out. */
export function extractKeypoints(m: InkMask): number[] {
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
  const nt = tk.length / 4,
    np = pk.length / 4;
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
    const tw = tk[4 * i + 2] * prior,
      th = tk[4 * i + 3] * prior,
      pw = pk[4 * j + 2],
      ph = pk[4 * j + 3];
    // A few degrees of rotation lengthens the short side of a long word by a few pixels.
    return Math.abs(tw - pw) <= 0.12 * tw + 0.06 * th + 2 && Math.abs(th - ph) <= 0.12 * th + 0.06 * tw + 2;
  };
  const cands: number[][] = [];
  for (let i = 0; i < nt; i++) {
    const ex = tk[4 * i] * prior,
      ey = tk[4 * i + 1] * prior;
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
      const x = tk[4 * i],
        y = tk[4 * i + 1];
      const px = t.a * x - t.b * y + t.tx,
        py = t.b * x + t.a * y + t.ty;
      for (const j of cands[i]) {
        const dx = pk[4 * j] - px,
          dy = pk[4 * j + 1] - py;
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
  let best: Similarity | null = null,
    bestScore = 0;
  for (let it = 0; it < 12000; it++) {
    const i = distinctive[rand(distinctive.length)],
      k = distinctive[rand(distinctive.length)];
    if (i === k) continue;
    const x1 = tk[4 * i],
      y1 = tk[4 * i + 1],
      x2 = tk[4 * k],
      y2 = tk[4 * k + 1];
    const dx = x2 - x1,
      dy = y2 - y1;
    const d = Math.hypot(dx, dy);
    if (d < minSpan) continue;
    const j = cands[i][rand(cands[i].length)],
      l = cands[k][rand(cands[k].length)];
    const ex = pk[4 * l] - pk[4 * j],
      ey = pk[4 * l + 1] - pk[4 * j + 1];
    const s = Math.hypot(ex, ey) / d;
    if (Math.abs(s / prior - 1) > 0.1) continue;
    const rot = Math.atan2(ey, ex) - Math.atan2(dy, dx);
    const ang = Math.atan2(Math.sin(rot), Math.cos(rot));
    if (Math.abs(ang) > (6 * Math.PI) / 180) continue;
    const a = s * Math.cos(ang),
      b = s * Math.sin(ang);
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
    const x = tk[4 * i],
      y = tk[4 * i + 1];
    const px = t.a * x - t.b * y + t.tx,
      py = t.b * x + t.a * y + t.ty;
    let bestJ = -1,
      bestD = limit * limit;
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
  let mx = 0,
    my = 0,
    mu = 0,
    mv = 0;
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
  let sxx = 0,
    sab = 0,
    sba = 0;
  for (const [x, y, u, v] of pairs) {
    const X = x - mx,
      Y = y - my,
      U = u - mu,
      V = v - mv;
    sxx += X * X + Y * Y;
    sab += X * U + Y * V;
    sba += X * V - Y * U;
  }
  const a = sab / sxx,
    b = sba / sxx;
  return { a, b, tx: mu - (a * mx - b * my), ty: mv - (b * mx + a * my) };
}
