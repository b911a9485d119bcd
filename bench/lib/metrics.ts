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

/** Pearson's correlation of two equally long series (0 when either is constant). */
export function pearson(a: number[], b: number[]): number {
  const ma = a.reduce((s, v) => s + v, 0) / a.length;
  const mb = b.reduce((s, v) => s + v, 0) / b.length;
  let num = 0,
    da = 0,
    db = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i] - ma) * (b[i] - mb);
    da += (a[i] - ma) ** 2;
    db += (b[i] - mb) ** 2;
  }
  return num / Math.sqrt(da * db || 1);
}

/** Spearman's rank correlation of two equally long series: Pearson's on their ranks. */
export function spearman(a: number[], b: number[]): number {
  return pearson(ranks(a), ranks(b));
}
