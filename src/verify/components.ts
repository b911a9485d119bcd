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

/** Flood-fill labelling with an explicit stack; components smaller than `minArea` are dropped from the list (their pixels keep a label). */
export function labelComponents(mask: Uint8Array, w: number, h: number, minArea = 1): Labelling {
  const labels = new Int32Array(w * h);
  const stack = new Int32Array(w * h);
  const components: Component[] = [];
  let next = 0;
  for (let start = 0; start < mask.length; start++) {
    if (mask[start] === 0 || labels[start] !== 0) continue;
    const id = ++next;
    let sp = 0;
    stack[sp++] = start;
    labels[start] = id;
    let minX = w, minY = h, maxX = 0, maxY = 0, area = 0, sx = 0, sy = 0;
    while (sp > 0) {
      const p = stack[--sp];
      const y = (p / w) | 0, x = p - y * w;
      area++;
      sx += x;
      sy += y;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      const y0 = y > 0 ? -1 : 0, y1 = y < h - 1 ? 1 : 0, x0 = x > 0 ? -1 : 0, x1 = x < w - 1 ? 1 : 0;
      for (let dy = y0; dy <= y1; dy++) {
        for (let dx = x0; dx <= x1; dx++) {
          const q = p + dy * w + dx;
          if (mask[q] !== 0 && labels[q] === 0) {
            labels[q] = id;
            stack[sp++] = q;
          }
        }
      }
    }
    if (area >= minArea) {
      components.push({ id, x: minX, y: minY, w: maxX - minX + 1, h: maxY - minY + 1, area, cx: sx / area, cy: sy / area });
    }
  }
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
  const xs: number[] = [], ys: number[] = [];
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
  let ox = 0, oy = 0;
  for (let k = 0; k < n; k++) {
    ox += xs[k];
    oy += ys[k];
  }
  // Centre the coordinates for numerical sanity.
  ox /= n;
  oy /= n;
  let sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, sxz = 0, syz = 0, sz = 0;
  for (let k = 0; k < n; k++) {
    const X = xs[k] - ox, Y = ys[k] - oy, Z = X * X + Y * Y;
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
  const D = m[0][3] / m[0][0], E = m[1][3] / m[1][1], F = m[2][3] / m[2][2];
  const ccx = -D / 2, ccy = -E / 2;
  const r2 = ccx * ccx + ccy * ccy - F;
  return r2 > 0 ? { cx: ccx + ox, cy: ccy + oy, r: Math.sqrt(r2) } : null;
}

/** How well a component's pixels lie on a given circle, and which sectors of it they cover. */
export function onCircle(labels: Int32Array, w: number, c: Component, cx: number, cy: number, r: number): { residual: number; sectors: boolean[] } {
  let dev = 0, n = 0;
  const sectors = new Array<boolean>(36).fill(false);
  for (let y = c.y; y < c.y + c.h; y++) {
    for (let x = c.x; x < c.x + c.w; x++) {
      if (labels[y * w + x] !== c.id) continue;
      const X = x - cx, Y = y - cy;
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
  const x0 = Math.max(1, box.x), y0 = Math.max(1, box.y);
  const x1 = Math.min(w - 2, box.x + box.w - 1), y1 = Math.min(h - 2, box.y + box.h - 1);
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
