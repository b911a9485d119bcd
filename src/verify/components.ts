/** Connected components of an ink mask (8-connected), with the statistics the locator judges them by. */

export interface Component {
  id: number; // label in the label image (1-based)
  x: number;
  y: number;
  w: number;
  h: number;
  /** Ink pixels. */
  area: number;
  /** Ink centroid. */
  cx: number;
  cy: number;
}

export interface Labelling {
  labels: Int32Array;
  /** Labels in use: 1..count (small components keep theirs though they are not listed). */
  count: number;
  components: Component[];
}

/**
 * Labelling by runs: each row's runs of ink are joined (union-find) to the runs they touch in the row
 * above, diagonals included. Work is per run, not per pixel, which on ink masks is several times less.
 * Labels are numbered in raster order of each component's first pixel; components smaller than
 * `minArea` are left out of the list (their pixels keep a label).
 */
export function labelComponents(mask: Uint8Array, w: number, h: number, minArea = 1): Labelling {
  // Runs as parallel arrays: row, first and last column.
  let cap = 1024;
  let ry = new Int32Array(cap),
    rs = new Int32Array(cap),
    re = new Int32Array(cap);
  let n = 0;
  const rowStart = new Int32Array(h + 1);
  for (let y = 0; y < h; y++) {
    rowStart[y] = n;
    const base = y * w;
    let x = 0;
    while (x < w) {
      if (!mask[base + x]) {
        x++;
        continue;
      }
      const s0 = x;
      while (x < w && mask[base + x]) x++;
      if (n === cap) {
        cap *= 2;
        const grow = (a: Int32Array) => {
          const b = new Int32Array(cap);
          b.set(a);
          return b;
        };
        ry = grow(ry);
        rs = grow(rs);
        re = grow(re);
      }
      ry[n] = y;
      rs[n] = s0;
      re[n] = x - 1;
      n++;
    }
  }
  rowStart[h] = n;
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let y = 1; y < h; y++) {
    let j = rowStart[y - 1];
    const jEnd = rowStart[y];
    for (let i = rowStart[y]; i < rowStart[y + 1]; i++) {
      // Runs above that end before this one starts (less one, for diagonals) can touch no later run.
      while (j < jEnd && re[j] < rs[i] - 1) j++;
      for (let k = j; k < jEnd && rs[k] <= re[i] + 1; k++) {
        const a = find(i),
          b = find(k);
        if (a !== b) {
          if (a < b) parent[b] = a;
          else parent[a] = b;
        }
      }
    }
  }
  const labels = new Int32Array(w * h);
  const idOf = new Int32Array(n);
  const stats: number[][] = []; // per id: minX, minY, maxX, maxY, area, sumX, sumY
  let next = 0;
  for (let i = 0; i < n; i++) {
    const root = find(i);
    let id = idOf[root];
    if (id === 0) {
      id = idOf[root] = ++next;
      stats.push([w, h, 0, 0, 0, 0, 0]);
    }
    const st = stats[id - 1];
    const y = ry[i],
      a = rs[i],
      b = re[i],
      len = b - a + 1;
    if (a < st[0]) st[0] = a;
    if (y < st[1]) st[1] = y;
    if (b > st[2]) st[2] = b;
    if (y > st[3]) st[3] = y;
    st[4] += len;
    st[5] += ((a + b) * len) / 2;
    st[6] += y * len;
    labels.fill(id, y * w + a, y * w + b + 1);
  }
  const components: Component[] = [];
  stats.forEach((st, k) => {
    if (st[4] < minArea) return;
    components.push({
      id: k + 1,
      x: st[0],
      y: st[1],
      w: st[2] - st[0] + 1,
      h: st[3] - st[1] + 1,
      area: st[4],
      cx: st[5] / st[4],
      cy: st[6] / st[4],
    });
  });
  return { labels, count: next, components };
}

export interface CircleFit {
  cx: number;
  cy: number;
  r: number;
  /** Mean distance of the pixels from the circle, relative to its radius. */
  residual: number;
  /** Which of 36 ten-degree sectors around the centre hold pixels. */
  sectors: boolean[];
}

/**
 * Least-squares circle through a component's pixels (the algebraic fit: x² + y² + Dx + Ey + F = 0).
 * A stamp's ring, whole or broken into arcs by worn rubber and thresholding, fits with a small residual.
 */
export function fitCircle(labels: Int32Array, w: number, c: Component): CircleFit | null {
  const xs: number[] = [],
    ys: number[] = [];
  for (let y = c.y; y < c.y + c.h; y++) {
    for (let x = c.x; x < c.x + c.w; x++) {
      if (labels[y * w + x] !== c.id) continue;
      xs.push(x + 0.5);
      ys.push(y + 0.5);
    }
  }
  const circle = circleThrough(xs, ys);
  return circle && { ...circle, ...onCircle(labels, w, c, circle.cx, circle.cy, circle.r) };
}

/** Algebraic least-squares circle through points, or null when they are (nearly) collinear. */
export function circleThrough(xs: number[], ys: number[]): { cx: number; cy: number; r: number } | null {
  const n = xs.length;
  if (n < 8) return null;
  let ox = 0,
    oy = 0;
  for (let k = 0; k < n; k++) {
    ox += xs[k];
    oy += ys[k];
  }
  // Centre the coordinates for numerical sanity.
  ox /= n;
  oy /= n;
  let sx = 0,
    sy = 0,
    sxx = 0,
    syy = 0,
    sxy = 0,
    sxz = 0,
    syz = 0,
    sz = 0;
  for (let k = 0; k < n; k++) {
    const X = xs[k] - ox,
      Y = ys[k] - oy,
      Z = X * X + Y * Y;
    sx += X;
    sy += Y;
    sxx += X * X;
    syy += Y * Y;
    sxy += X * Y;
    sxz += X * Z;
    syz += Y * Z;
    sz += Z;
  }
  // Normal equations for [D, E, F]: minimise sum (Z + D X + E Y + F)^2.
  const m = [
    [sxx, sxy, sx, -sxz],
    [sxy, syy, sy, -syz],
    [sx, sy, n, -sz],
  ];
  for (let col = 0; col < 3; col++) {
    let piv = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(m[r][col]) > Math.abs(m[piv][col])) piv = r;
    if (Math.abs(m[piv][col]) < 1e-9) return null;
    [m[col], m[piv]] = [m[piv], m[col]];
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const f = m[r][col] / m[col][col];
      for (let k = col; k < 4; k++) m[r][k] -= f * m[col][k];
    }
  }
  const D = m[0][3] / m[0][0],
    E = m[1][3] / m[1][1],
    F = m[2][3] / m[2][2];
  const ccx = -D / 2,
    ccy = -E / 2;
  const r2 = ccx * ccx + ccy * ccy - F;
  return r2 > 0 ? { cx: ccx + ox, cy: ccy + oy, r: Math.sqrt(r2) } : null;
}

/** How well a component's pixels lie on a given circle, and which sectors of it they cover. */
export function onCircle(
  labels: Int32Array,
  w: number,
  c: Component,
  cx: number,
  cy: number,
  r: number,
): { residual: number; sectors: boolean[] } {
  let dev = 0,
    n = 0;
  const sectors = new Array<boolean>(36).fill(false);
  for (let y = c.y; y < c.y + c.h; y++) {
    for (let x = c.x; x < c.x + c.w; x++) {
      if (labels[y * w + x] !== c.id) continue;
      const X = x - cx,
        Y = y - cy;
      dev += Math.abs(Math.hypot(X, Y) - r);
      n++;
      let a = Math.atan2(Y, X);
      if (a < 0) a += 2 * Math.PI;
      sectors[Math.min(35, Math.floor((a / (2 * Math.PI)) * 36))] = true;
    }
  }
  return { residual: n ? dev / n / r : 1, sectors };
}

/**
 * Spread of stroke directions inside a box: the normalised entropy (0..1) of an 8-bin histogram of
 * edge orientations of the mask. Printed type is mostly horizontal and vertical edges; handwriting
 * turns through every direction.
 */
export function orientationEntropy(mask: Uint8Array, w: number, box: { x: number; y: number; w: number; h: number }, h: number): number {
  const bins = new Float64Array(8);
  let total = 0;
  const x0 = Math.max(1, box.x),
    y0 = Math.max(1, box.y);
  const x1 = Math.min(w - 2, box.x + box.w - 1),
    y1 = Math.min(h - 2, box.y + box.h - 1);
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * w + x;
      // Sobel on the 0/1 mask.
      const gx = mask[i - w + 1] + 2 * mask[i + 1] + mask[i + w + 1] - mask[i - w - 1] - 2 * mask[i - 1] - mask[i + w - 1];
      const gy = mask[i + w - 1] + 2 * mask[i + w] + mask[i + w + 1] - mask[i - w - 1] - 2 * mask[i - w] - mask[i - w + 1];
      if (gx === 0 && gy === 0) continue;
      // Orientation modulo pi: an edge and its opposite side count together.
      let a = Math.atan2(gy, gx);
      if (a < 0) a += Math.PI;
      const b = Math.min(7, Math.floor((a / Math.PI) * 8));
      bins[b]++;
      total++;
    }
  }
  if (total === 0) return 0;
  let e = 0;
  for (const c of bins) if (c > 0) e -= (c / total) * Math.log(c / total);
  return e / Math.log(8);
}
