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
