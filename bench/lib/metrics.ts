// Error rates. Scores: higher = more likely genuine.

/** Equal error rate of genuine vs impostor scores (the point where FAR = FRR, interpolated). */
export function eer(genuine: number[], impostor: number[]): number {
  if (genuine.length === 0 || impostor.length === 0) return NaN;
  const all = [...genuine.map((s) => ({ s, g: 1 })), ...impostor.map((s) => ({ s, g: 0 }))].sort((a, b) => a.s - b.s);
  // Threshold just above position i: everything at or below is rejected.
  let rejG = 0,
    rejI = 0;
  let best = { gap: Infinity, rate: 0.5 };
  const consider = () => {
    const frr = rejG / genuine.length;
    const far = (impostor.length - rejI) / impostor.length;
    const gap = Math.abs(far - frr);
    if (gap < best.gap) best = { gap, rate: (far + frr) / 2 };
  };
  consider();
  for (let i = 0; i < all.length; i++) {
    if (all[i].g) rejG++;
    else rejI++;
    if (i + 1 < all.length && all[i + 1].s === all[i].s) continue; // ties move together
    consider();
  }
  return best.rate;
}

/** FAR (impostors accepted) and FRR (genuine rejected) when accepting score >= t. */
export function ratesAt(genuine: number[], impostor: number[], t: number): { far: number; frr: number } {
  const far = impostor.filter((s) => s >= t).length / Math.max(1, impostor.length);
  const frr = genuine.filter((s) => s < t).length / Math.max(1, genuine.length);
  return { far, frr };
}

/** Ranks of `a` (0-based, ties share their mean rank). */
function ranks(a: number[]): number[] {
  const idx = a.map((v, i) => [v, i] as const).sort((x, y) => x[0] - y[0]);
  const r = new Array(a.length).fill(0);
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1][0] === idx[i][0]) j++;
    for (let k = i; k <= j; k++) r[idx[k][1]] = (i + j) / 2;
    i = j + 1;
  }
  return r;
}

/** Spearman's rank correlation of two equally long series. */
export function spearman(a: number[], b: number[]): number {
  const ra = ranks(a);
  const rb = ranks(b);
  const m = (ra.length - 1) / 2;
  let num = 0,
    da = 0,
    db = 0;
  for (let i = 0; i < ra.length; i++) {
    num += (ra[i] - m) * (rb[i] - m);
    da += (ra[i] - m) ** 2;
    db += (rb[i] - m) ** 2;
  }
  return num / Math.sqrt(da * db || 1);
}
