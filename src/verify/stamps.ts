/**
 * Round stamps found by their rings, even where a signature runs across the ring and joins it into one
 * connected component (the arc test in classify.ts needs the ring apart). Edge pixels vote for the
 * centre along their normal (a Hough transform for circles of any radius in range, voting in 2-D and
 * measuring the radius afterwards); a centre with enough votes whose ring is mostly inked is a stamp.
 * Its ring is then erased from the mask so the signature it touched stands alone.
 */

export interface Ring {
  cx: number;
  cy: number;
  r: number;
  /** Half-width of the inked band around r. */
  band: number;
}

/** Detect rings of radius minR..maxR in a 0/1 mask; erase each ring's band from the mask. */
export function eraseRings(mask: Uint8Array, w: number, h: number, minR: number, maxR: number): Ring[] {
  if (maxR <= minR || w < 2 * minR || h < 2 * minR) return [];
  // Normals from a 5x5 box-smoothed mask: the binary edge alone points in one of only 8 directions.
  const smooth = boxBlur5(mask, w, h);
  const aw = Math.ceil(w / 2),
    ah = Math.ceil(h / 2);
  const acc = new Float32Array(aw * ah);
  const span = maxR - minR;
  for (let y = 2; y < h - 2; y++) {
    for (let x = 2; x < w - 2; x++) {
      const i = y * w + x;
      if (!mask[i]) continue;
      // Only boundary pixels vote.
      if (mask[i - 1] && mask[i + 1] && mask[i - w] && mask[i + w]) continue;
      const gx = smooth[i + 1] - smooth[i - 1],
        gy = smooth[i + w] - smooth[i - w];
      const g = Math.hypot(gx, gy);
      if (g < 2) continue;
      const nx = gx / g,
        ny = gy / g;
      // Both ways along the normal: the outer edge of a ring points in, its inner edge points out.
      for (let s = -1; s <= 1; s += 2) {
        for (let d = minR; d <= maxR; d += 1.5) {
          const vx = (x + s * nx * d) / 2,
            vy = (y + s * ny * d) / 2;
          if (vx < 0 || vy < 0 || vx >= aw || vy >= ah) break;
          acc[(vy | 0) * aw + (vx | 0)] += 1 / span;
        }
      }
    }
  }
  const rings: Ring[] = [];
  // A ring of radius r has about 4 pi r boundary pixels, each casting one vote near the centre.
  for (let tries = 0; tries < 4; tries++) {
    let best = -1,
      bestV = 0;
    for (let k = 0; k < acc.length; k++) {
      const v =
        acc[k] +
        (k > 0 ? acc[k - 1] : 0) +
        (k + 1 < acc.length ? acc[k + 1] : 0) +
        (k >= aw ? acc[k - aw] : 0) +
        (k + aw < acc.length ? acc[k + aw] : 0);
      if (v > bestV) {
        bestV = v;
        best = k;
      }
    }
    if (best < 0 || bestV * span < 2 * Math.PI * minR) break;
    const cx = (best % aw) * 2 + 1,
      cy = Math.floor(best / aw) * 2 + 1;
    // Clear the neighbourhood of this peak whatever it turns out to be.
    const clear = Math.ceil(minR / 2);
    for (let yy = Math.max(0, ((best / aw) | 0) - clear); yy <= Math.min(ah - 1, ((best / aw) | 0) + clear); yy++) {
      for (let xx = Math.max(0, (best % aw) - clear); xx <= Math.min(aw - 1, (best % aw) + clear); xx++) acc[yy * aw + xx] = 0;
    }
    // Stamps often have two concentric rings: erase each one found and look again at the same centre.
    for (let k = 0; k < 3; k++) {
      const ring = measureRing(mask, w, h, cx, cy, minR, maxR);
      if (!ring) break;
      rings.push(ring);
      erase(mask, w, h, ring);
    }
  }
  return rings;
}

export function erase(mask: Uint8Array, w: number, h: number, ring: Ring): void {
  const x0 = Math.max(0, Math.floor(ring.cx - ring.r - ring.band)),
    x1 = Math.min(w - 1, Math.ceil(ring.cx + ring.r + ring.band));
  const y0 = Math.max(0, Math.floor(ring.cy - ring.r - ring.band)),
    y1 = Math.min(h - 1, Math.ceil(ring.cy + ring.r + ring.band));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (Math.abs(Math.hypot(x + 0.5 - ring.cx, y + 0.5 - ring.cy) - ring.r) <= ring.band) mask[y * w + x] = 0;
    }
  }
}

/**
 * The radius at which ink piles up around a candidate centre, and whether a ring is really there: a
 * thin band, inked most of the way round. Refines the centre by a pixel either way.
 */
function measureRing(mask: Uint8Array, w: number, h: number, cx0: number, cy0: number, minR: number, maxR: number): Ring | null {
  // The ink near the candidate centre, gathered once for the centre offsets tried below.
  const xs: number[] = [],
    ys: number[] = [];
  const x0 = Math.max(0, Math.floor(cx0 - maxR - 5)),
    x1 = Math.min(w - 1, Math.ceil(cx0 + maxR + 5));
  const y0 = Math.max(0, Math.floor(cy0 - maxR - 5)),
    y1 = Math.min(h - 1, Math.ceil(cy0 + maxR + 5));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (mask[y * w + x]) {
        xs.push(x + 0.5);
        ys.push(y + 0.5);
      }
    }
  }
  let best: Ring | null = null,
    bestScore = 0;
  const hist = new Float32Array(maxR + 4);
  const tryCentre = (cx: number, cy: number) => {
    hist.fill(0);
    for (let k = 0; k < xs.length; k++) {
      const d = Math.hypot(xs[k] - cx, ys[k] - cy);
      if (d < minR - 2 || d > maxR + 2) continue;
      // Ink per unit of circumference, so large radii are not favoured.
      hist[Math.round(d)] += 1 / d;
    }
    for (let r = minR; r <= maxR; r++) {
      const score = hist[r - 1] + hist[r] + hist[r + 1];
      if (score > bestScore) {
        bestScore = score;
        best = { cx, cy, r, band: 2 };
      }
    }
  };
  // The vote came from a half-size grid: search the centre a pixel or two either way, coarse then fine.
  for (let oy = -1; oy <= 1; oy++) for (let ox = -1; ox <= 1; ox++) tryCentre(cx0 + ox + 0.5, cy0 + oy + 0.5);
  const coarse = best as Ring | null;
  if (coarse) for (let oy = -1; oy <= 1; oy++) for (let ox = -1; ox <= 1; ox++) if (ox || oy) tryCentre(coarse.cx + ox, coarse.cy + oy);
  const found = best as Ring | null;
  if (!found) return null;
  // Inked sectors within the band, and the band's width where the ink is.
  const sectors = new Uint16Array(36);
  let inBand = 0,
    band = 1.5;
  const { cx, cy, r } = found;
  const limit = Math.max(3, 0.08 * r);
  for (let k = 0; k < xs.length; k++) {
    const dx = xs[k] - cx,
      dy = ys[k] - cy;
    const off = Math.abs(Math.hypot(dx, dy) - r);
    if (off > limit) continue;
    inBand++;
    band = Math.max(band, Math.min(off + 1, limit));
    let a = Math.atan2(dy, dx);
    if (a < 0) a += 2 * Math.PI;
    sectors[Math.min(35, Math.floor((a / (2 * Math.PI)) * 36))]++;
  }
  let covered = 0;
  for (const n of sectors) if (n >= 2) covered++;
  // A ring: inked around most of its circumference, and the ink within the band is ring-like in amount
  // (not a solid disc, not a scatter).
  const perimeter = 2 * Math.PI * r;
  if (covered < 0.7 * 36 || inBand < perimeter) return null;
  return { cx, cy, r, band: Math.ceil(band) };
}

function boxBlur5(mask: Uint8Array, w: number, h: number): Uint8Array {
  const tmp = new Uint8Array(w * h),
    out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    let acc = 0;
    for (let x = -2; x < w + 2; x++) {
      if (x + 2 < w) acc += mask[row + x + 2];
      if (x - 3 >= 0) acc -= mask[row + x - 3];
      if (x >= 0 && x < w) tmp[row + x] = acc;
    }
  }
  for (let x = 0; x < w; x++) {
    let acc = 0;
    for (let y = -2; y < h + 2; y++) {
      if (y + 2 < h) acc += tmp[(y + 2) * w + x];
      if (y - 3 >= 0) acc -= tmp[(y - 3) * w + x];
      if (y >= 0 && y < h) out[y * w + x] = acc;
    }
  }
  return out;
}
