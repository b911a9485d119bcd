/**
 * Sorting the ink of a page into print, rules, stamps and handwriting, and proposing signature boxes.
 *
 * Printed text lies in rows of similar, small components; stamps are rings (whole or broken) with marks
 * inside; ruling lines are removed before labelling and their leftovers are thin slivers. What remains
 * large, irregular and curved seeds a candidate; neighbours merge into it, and each candidate is scored.
 */
import { circleThrough, fitCircle, labelComponents, onCircle, orientationEntropy, type Component } from "./components";
import { gridRemnant, inkTurnsBack, isFrameEdge, overlaps, turnsBack, unionBox, type Found, type InkMask } from "./ink-mask";
import { removeRulingLines } from "./morphology";
import { erase, eraseRings, type Ring } from "./stamps";
import type { Box } from "./types";

/** Candidates scoring below this are not reported. */
export const MIN_CONFIDENCE = 0.45;

export interface PageClassification {
  /** Candidate signatures, in working-copy pixels. */
  found: Found[];
  /** Labels of the mask after rule removal, and what each labelled component was taken for. */
  labels: Int32Array;
  labelCount: number;
  components: Component[];
  kinds: Kind[];
}

/** Classify a working copy's ink (its mask loses its ruling lines on the way). */
export function classifyPage(m: InkMask): PageClassification {
  const long = Math.max(m.w, m.h);
  // Where a ruling line's ink was, for telling strokes written across it.
  const ruled = removeRulingLines(m.mask, m.w, m.h, Math.max(40, Math.round(m.w * 0.12)), Math.max(30, Math.round(m.h * 0.05)));
  let lab = labelComponents(m.mask, m.w, m.h, 6);
  let res = findSignatures(m, lab.labels, lab.components, long, [], ruled);
  // A stamp pressed over a signature joins it into one component the arc test cannot see as a ring.
  // Look for rings in what is left as handwriting; erase them and sort the page again.
  const rings = hiddenRings(m, lab.labels, lab.components, res.kinds, res.unit);
  if (rings.length > 0) {
    lab = labelComponents(m.mask, m.w, m.h, 6);
    res = findSignatures(m, lab.labels, lab.components, long, rings, ruled);
  }
  return { found: res.found, labels: lab.labels, labelCount: lab.count, components: lab.components, kinds: res.kinds };
}

function hiddenRings(m: InkMask, labels: Int32Array, comps: Component[], kinds: Kind[], unit: number): Ring[] {
  const minR = Math.max(10, 2.5 * unit),
    maxR = Math.min(40 * unit, 0.12 * Math.max(m.w, m.h));
  const big = comps.filter((c, i) => (kinds[i] === Kind.Seed || kinds[i] === Kind.Neutral) && c.w >= 2 * minR && c.h >= 2 * minR);
  if (big.length === 0) return [];
  // Work on the part of the page those components cover: voting and measuring scale with its area.
  const ids = new Set(big.map((c) => c.id));
  const u = unionBox(big),
    pad = Math.ceil(maxR);
  const ax = Math.max(0, u.x - pad),
    ay = Math.max(0, u.y - pad);
  const area = { x: ax, y: ay, w: Math.min(m.w, u.x + u.w + pad) - ax, h: Math.min(m.h, u.y + u.h + pad) - ay };
  const only = new Uint8Array(area.w * area.h);
  for (const c of big) {
    for (let y = c.y; y < c.y + c.h; y++) {
      for (let x = c.x; x < c.x + c.w; x++) if (ids.has(labels[y * m.w + x])) only[(y - area.y) * area.w + (x - area.x)] = 1;
    }
  }
  const rings = eraseRings(only, area.w, area.h, Math.round(minR), Math.round(maxR)).map((r) => ({
    ...r,
    cx: r.cx + area.x,
    cy: r.cy + area.y,
  }));
  for (const ring of rings) erase(m.mask, m.w, m.h, ring);
  return rings;
}

export enum Kind {
  Noise,
  Line,
  Text,
  Stamp,
  Small, // small and not in a text row: an i-dot, a fragment of a cut stroke, or stray print
  Neutral, // mid-sized, not text: can join a signature
  Seed, // large and irregular: where a signature is
}

function findSignatures(
  m: InkMask,
  labels: Int32Array,
  comps: Component[],
  long: number,
  knownRings: Ring[],
  ruled: Uint8Array,
): { found: Found[]; kinds: Kind[]; unit: number } {
  const kinds = new Array<Kind>(comps.length).fill(Kind.Neutral);
  comps.forEach((c, i) => {
    const thin = Math.min(c.w, c.h),
      len = Math.max(c.w, c.h);
    if ((thin <= 3 && len >= 12 * thin) || (m.angle === 0 && isFrameEdge(c, labels, m.w, m.h))) kinds[i] = Kind.Line;
  });

  const { rowText, rows, textH, body } = findTextRows(comps, kinds, long, m.h, (row) => crossedByRule(row, comps, ruled, m.w));
  const unit = textH ?? long * 0.008;
  // A signature written with pen lifts comes in letter-sized pieces: measured against a form's large
  // title instead of its body text, they would all be "small" and none tall enough to seed it.
  const bodyUnit = body ?? unit;
  comps.forEach((c, i) => {
    if (kinds[i] !== Kind.Neutral) return;
    if (rowText[i]) kinds[i] = Kind.Text;
    else if (c.h <= 1.6 * bodyUnit && c.w <= 12 * bodyUnit) kinds[i] = Kind.Small;
  });

  markStamps(labels, m.w, comps, kinds, unit, long, knownRings);

  const seedH = Math.max(2.5 * bodyUnit, long * 0.015, 8);
  comps.forEach((c, i) => {
    if (kinds[i] !== Kind.Neutral) return;
    const fill = c.area / (c.w * c.h);
    // Handwriting is not a tall sliver (a page edge in a photo is): even a lone loop is wider than a tenth of its height.
    // Nor is it the outline of a page photographed on a table, which spans the frame; a signature can span
    // a close-up too, but its strokes turn back where a page's edges do not.
    if (c.h >= seedH && fill < 0.5 && c.w >= 0.1 * c.h && c.area >= 2 * seedH && (c.w < 0.9 * m.w || turnsBack(c, labels, m.w)))
      kinds[i] = Kind.Seed;
  });
  const seedIds = new Set(comps.filter((_, i) => kinds[i] === Kind.Seed).map((c) => c.id));
  // Seeds that are what rule removal left of a table's grid, on a page with print (where tables are).
  const gridSeeds = new Set<number>();
  if (textH !== null)
    comps.forEach((c, i) => {
      if (kinds[i] === Kind.Seed && gridRemnant(c, labels, m.w)) gridSeeds.add(c.id);
    });

  const wordGap = wordGapFor(long);
  const clusters = growClusters(comps, kinds, wordGap);
  absorbRows(
    wordGap,
    clusters,
    rows.map((l) => l.filter((i) => kinds[i] === Kind.Text).map((i) => comps[i])),
  );
  const out: Found[] = [];
  for (const cl of clusters) {
    // A candidate grown only from a table's grid is print photographed small: the grid's corners and
    // crosses seeded it, and the cells' print, blurred into blobs, grew it. One with a hand's seed in it is
    // kept as it was, grid and all: the test for a grid can take a hand's straight stroke for one.
    if (gridSeeds.size > 0 && cl.every((c) => !seedIds.has(c.id) || gridSeeds.has(c.id))) continue;
    const box = unionBox(cl);
    const ink = cl.reduce((s, c) => s + c.area, 0);
    const entropy = orientationEntropy(m.mask, m.w, box, m.h);
    // A page's outline photographed on a table, or a corner of it: rule removal takes the long straight
    // sides, and what is left (two arms meeting at a corner, or the outline whole where its sides lean)
    // passed for a tall, sparse stroke on 1 of 2 keystoned outlines. No line across it meets it three
    // times; a hand's ink does, or else curves (of 1715 boxes found on every 2nd Dutch writer's images at
    // full and at half size, 7 do not turn back, all of them with edges in every direction, and none spans
    // the frame). So a candidate that does not turn back must curve, and may not span the frame (close
    // up, a signature that spans it turns back, as a seed spanning the width must: above).
    if ((entropy <= CURVE_FROM || box.w >= 0.9 * m.w || box.h >= 0.9 * m.h) && !inkTurnsBack(m.mask, ruled, m.w, box)) continue;
    const confidence = scoreCandidate(box, ink, unit, entropy);
    if (confidence >= MIN_CONFIDENCE) out.push({ box, confidence });
  }
  return { found: out, kinds, unit };
}

/**
 * Printed text lies in rows: chains of at least four components of similar height, aligned on a
 * common centre line, with gaps shorter than their height. Returns which components are in such rows
 * and the median height of print (null when the page has none).
 */
function findTextRows(
  comps: Component[],
  kinds: Kind[],
  long: number,
  pageH: number,
  crossed: (row: number[]) => boolean,
): { rowText: boolean[]; rows: number[][]; textH: number | null; body: number | null } {
  const order = comps.map((_, i) => i).filter((i) => kinds[i] === Kind.Neutral && comps[i].h <= long * 0.06);
  order.sort((a, b) => comps[a].x - comps[b].x);
  const parent = comps.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (let a = 0; a < order.length; a++) {
    const ci = comps[order[a]];
    const reach = ci.x + ci.w + 2.4 * ci.h;
    for (let b = a + 1; b < order.length; b++) {
      const cj = comps[order[b]];
      if (cj.x > reach) break;
      const hMax = Math.max(ci.h, cj.h),
        hMin = Math.min(ci.h, cj.h);
      if (hMax > 2 * hMin) continue;
      const gap = cj.x - (ci.x + ci.w);
      if (gap > 1.2 * hMax || gap < -0.3 * Math.min(ci.w, cj.w)) continue;
      const midI = ci.y + ci.h / 2,
        midJ = cj.y + cj.h / 2;
      const baseI = ci.y + ci.h,
        baseJ = cj.y + cj.h;
      if (Math.abs(midI - midJ) > 0.3 * hMax && Math.abs(baseI - baseJ) > 0.2 * hMax) continue;
      parent[find(order[a])] = find(order[b]);
    }
  }
  const members = new Map<number, number[]>();
  for (const i of order) {
    const r = find(i);
    const list = members.get(r);
    if (list) list.push(i);
    else members.set(r, [i]);
  }
  const rows = [...members.values()].filter((l) => l.length >= 4);
  const rowText = new Array<boolean>(comps.length).fill(false);
  if (rows.length === 0) return { rowText, rows: [], textH: null, body: null };
  const sorted = rows.map((l) => l.map((i) => comps[i].h).sort((x, y) => x - y));
  // The unit the stamp test and the candidates' score measure against stays the pooled median (tuned
  // with it); what counts as small, the height a seed must reach and what counts as a tall row use the
  // body text.
  const pooled = sorted.flat().sort((x, y) => x - y);
  const textH = middleOf(pooled);
  // Body text: the smallest print that comes in long rows. A form's title or headings can outnumber it
  // and would otherwise set the scale that a signature is measured against. Not below 0.4 of the pooled
  // height: a dotted leader to sign on is a long row of specks, not print.
  const long6 = sorted.filter((hs) => hs.length >= 6).map(middleOf);
  const body = long6.length > 0 ? Math.max(Math.min(...long6), 0.4 * textH) : textH;
  // All the rows in one line of letters at least a tenth of the image's height: an image of a name alone
  // (a signature photographed, scanned or cut out). It sets the body text's height itself, so it could
  // never stand above it; its rows are judged as tall rows are, and asked to keep a line as whole letters do.
  const ids = rows.flat();
  const oneLine =
    textH >= LARGE_LETTERS * pageH &&
    Math.max(...ids.map((i) => comps[i].y + comps[i].h)) - Math.min(...ids.map((i) => comps[i].y)) <= 2 * pooled[pooled.length - 1];
  sorted.forEach((hs, r) => {
    const med = middleOf(hs);
    // A short row much taller than the body text is more likely a signature written in separate pieces;
    // headings are taller than body text too, but come in longer rows.
    const printLike = rows[r].length >= 6 || med <= 2.5 * body;
    // Print of one size keeps its heights within a small range (x-height to ascender); letters written
    // with pen lifts, a capital three times a small letter, do not, and stand well above the body text.
    const p10 = hs[Math.floor(0.1 * (hs.length - 1))],
      p90 = hs[Math.ceil(0.9 * (hs.length - 1))];
    // And print sits on a line (Bengali print hangs from one): most of a row's tops or bottoms keep it to
    // a pixel, where handwriting's stray by a few (`keepsALine`).
    // A line signed on cuts the letters' lower parts off and leaves the bottoms level (Bengali tops are
    // level anyway): letters whose strokes go on across a removed rule were written across it.
    const level = oneLine ? LINE_PRINT_LEVEL : PAGE_PRINT_LEVEL;
    const letters = rows[r].map((i) => comps[i]);
    const handwritten = (med > 1.5 * body || oneLine) && (p90 > 2.5 * p10 || !keepsALine(letters, level) || crossed(rows[r]));
    if (printLike && !handwritten) for (const i of rows[r]) rowText[i] = true;
  });
  const printed = rows.filter((l) => rowText[l[0]]);
  // A name alone on the image was all the "print" there was: there is none to measure its scale by.
  if (oneLine && printed.length === 0) return { rowText, rows: [], textH: null, body: null };
  return { rowText, rows: printed, textH, body };
}

/**
 * Round stamps: rings, whole or broken into arcs, and everything inside them. A long arc that fits a
 * circle closely proposes a ring; every component lying on that circle counts towards it, and a
 * proposal whose arcs go most of the way round is a stamp. A handwritten loop can fit a circle too, but
 * nothing else lies on it, so it covers only its own sectors.
 */
function markStamps(
  labels: Int32Array,
  w: number,
  comps: Component[],
  kinds: Kind[],
  unit: number,
  long: number,
  knownRings: Ring[],
): void {
  // Stamps are 2 to 5 cm across: a few text heights, never a large part of the page.
  const minR = Math.max(10, 2.5 * unit),
    maxR = Math.min(40 * unit, 0.12 * long);
  const eligible = (i: number) => kinds[i] === Kind.Neutral || kinds[i] === Kind.Small || kinds[i] === Kind.Line;
  const textIds = new Set(comps.filter((_, i) => kinds[i] === Kind.Text).map((c) => c.id));
  const areaOf = new Map(comps.map((c) => [c.id, c.area]));
  const h = labels.length / w;
  const rings: Array<{ cx: number; cy: number; r: number }> = [...knownRings];
  comps.forEach((c, i) => {
    if (!eligible(i) || Math.max(c.w, c.h) < minR) return;
    if (rings.some((g) => Math.hypot(c.x + c.w / 2 - g.cx, c.y + c.h / 2 - g.cy) <= g.r * 1.1)) return;
    const fit = fitCircle(labels, w, c);
    if (!fit || fit.r < minR || fit.r > maxR || fit.residual * fit.r > Math.max(2, 0.05 * fit.r) || Math.max(c.w, c.h) < 0.6 * fit.r)
      return;
    if (c.area > 2 * Math.PI * fit.r * Math.max(3, fit.r / 5)) return; // a ring is thin for its size
    // An arc pins the radius down only roughly: refit on all ink (not print) near the circle, in a
    // narrowing band, then count the ten-degree sectors the ink covers.
    let circle = { cx: fit.cx, cy: fit.cy, r: fit.r };
    let covered = 0;
    for (const rel of [0.25, 0.12, 0.07]) {
      const band = Math.max(2.5, rel * circle.r);
      const xs: number[] = [],
        ys: number[] = [],
        ids: number[] = [],
        sectors: number[] = [];
      const inBand = new Map<number, number>();
      const x0 = Math.max(0, Math.floor(circle.cx - circle.r - band)),
        x1 = Math.min(w - 1, Math.ceil(circle.cx + circle.r + band));
      const y0 = Math.max(0, Math.floor(circle.cy - circle.r - band)),
        y1 = Math.min(h - 1, Math.ceil(circle.cy + circle.r + band));
      for (let y = y0; y <= y1; y++) {
        for (let x = x0; x <= x1; x++) {
          const id = labels[y * w + x];
          if (id === 0 || textIds.has(id)) continue;
          const dx = x + 0.5 - circle.cx,
            dy = y + 0.5 - circle.cy;
          if (Math.abs(Math.hypot(dx, dy) - circle.r) > band) continue;
          xs.push(x + 0.5);
          ys.push(y + 0.5);
          let a = Math.atan2(dy, dx);
          if (a < 0) a += 2 * Math.PI;
          ids.push(id);
          sectors.push(Math.min(35, Math.floor((a / (2 * Math.PI)) * 36)));
          inBand.set(id, (inBand.get(id) ?? 0) + 1);
        }
      }
      // Only ink that follows the circle covers it: a ring's arcs lie in the band for most of their
      // length, while the strokes of handwriting that a circle happens to pass through only cross it
      // (a dense signature crosses most of a circle's sectors that way).
      const hits = new Uint16Array(36);
      for (let k = 0; k < ids.length; k++) if ((inBand.get(ids[k]) ?? 0) >= 0.5 * (areaOf.get(ids[k]) ?? Infinity)) hits[sectors[k]]++;
      covered = hits.reduce((n, v) => n + (v >= 2 ? 1 : 0), 0) / 36;
      const next = circleThrough(xs, ys);
      if (!next || Math.abs(next.r - circle.r) > 0.3 * circle.r) break;
      if (rel !== 0.07) circle = next;
    }
    if (covered >= 0.55 && circle.r >= minR && circle.r <= maxR) rings.push(circle);
  });
  for (const ring of rings) {
    // Inside a ring that had a signature running across it, the signature's own strokes stay: only
    // print-sized marks there are the stamp's.
    const crossed = knownRings.includes(ring as Ring);
    const inner = ring.r * 1.08 + 2,
      outer = ring.r * 1.3 + 3;
    const within = (c: Component, r: number) =>
      c.x >= ring.cx - r && c.y >= ring.cy - r && c.x + c.w <= ring.cx + r && c.y + c.h <= ring.cy + r;
    comps.forEach((c, i) => {
      // Inside the ring, or a piece of the ring itself (its box can poke out of the fitted circle's box).
      const onRing = within(c, outer) && onCircle(labels, w, c, ring.cx, ring.cy, ring.r).residual <= 0.12;
      const inside = within(c, inner) && (!crossed || Math.max(c.w, c.h) <= 2.5 * unit);
      if (onRing || inside) kinds[i] = Kind.Stamp;
    });
  }
}

/**
 * Seeds that lie close together are one signature (words of a name, a flourish under it); mid-sized
 * pieces near a seed join it, and small pieces join only when they lie within it (i-dots, stroke
 * fragments a ruling line cut off).
 */
/**
 * How far apart, in candidate heights, the words of one signature may be: 1.3 heights, but no more than 3%
 * of the page's long side unless 0.9 heights is more. Short scripts written small (a Bengali name hangs from
 * its headline, so its height is mostly the letters' body) leave gaps of about their height between words;
 * two tall signatures side by side on a form can be as little as that apart, but not in page terms.
 */
function wordGapFor(long: number): (h: number) => number {
  return (h) => Math.max(0.9, Math.min(1.3, (0.03 * long) / Math.max(1, h)));
}

/**
 * The widest gap a removed ruling line leaves in a stroke it crossed: removeRulingLines' maxThick, the row
 * its three-row band takes on each side of the line, and one for the stroke's fading edge. (It was 4,
 * which left the loops and descenders of a signature written on its line out of the box.)
 */
const RULE_GAP = 6;

function growClusters(comps: Component[], kinds: Kind[], wordGap: (h: number) => number): Component[][] {
  type Cluster = { parts: Component[]; x0: number; y0: number; x1: number; y1: number };
  const clusters: Cluster[] = [];
  const used = new Array<boolean>(comps.length).fill(false);
  comps.forEach((c, i) => {
    if (kinds[i] !== Kind.Seed) return;
    clusters.push({ parts: [c], x0: c.x, y0: c.y, x1: c.x + c.w, y1: c.y + c.h });
    used[i] = true;
  });
  const near = (a: Cluster, x0: number, y0: number, x1: number, y1: number, fx: number, fy: number) => {
    const h = a.y1 - a.y0;
    return x0 < a.x1 + fx * h && x1 > a.x0 - fx * h && y0 < a.y1 + fy * h && y1 > a.y0 - fy * h;
  };
  const absorb = (a: Cluster, c: Component) => {
    a.parts.push(c);
    a.x0 = Math.min(a.x0, c.x);
    a.y0 = Math.min(a.y0, c.y);
    a.x1 = Math.max(a.x1, c.x + c.w);
    a.y1 = Math.max(a.y1, c.y + c.h);
  };
  for (let pass = 0, changed = true; changed && pass < 8; pass++) {
    changed = false;
    for (let a = 0; a < clusters.length; a++) {
      for (let b = a + 1; b < clusters.length; b++) {
        const A = clusters[a],
          B = clusters[b];
        if (near(A, B.x0, B.y0, B.x1, B.y1, wordGap(A.y1 - A.y0), 0.25) || near(B, A.x0, A.y0, A.x1, A.y1, wordGap(B.y1 - B.y0), 0.25)) {
          for (const p of B.parts) absorb(A, p);
          clusters.splice(b, 1);
          b--;
          changed = true;
        }
      }
    }
    comps.forEach((c, i) => {
      if (used[i]) return;
      const k = kinds[i];
      if (k !== Kind.Neutral && k !== Kind.Small && k !== Kind.Line) return;
      for (const cl of clusters) {
        const h = cl.y1 - cl.y0;
        const joins =
          k === Kind.Neutral
            ? near(cl, c.x, c.y, c.x + c.w, c.y + c.h, c.h >= 0.35 * h ? wordGap(h) : 0.4, 0.2)
            : k === Kind.Small
              ? // Touching, or across a removed ruling line: a stroke the line ran through is cut in two
                // by the line's thickness (up to RULE_GAP px; more in a blurred photo than in a scan).
                near(cl, c.x, c.y, c.x + c.w, c.y + c.h, Math.max(0.02, RULE_GAP / h), Math.max(0.02, RULE_GAP / h))
              : // A thin stroke (a flourish cut by a ruling line) joins only if it stays within reach of the
                // signature: a ruling line runs on well past it.
                c.x >= cl.x0 - 0.3 * h && c.x + c.w <= cl.x1 + 0.3 * h && c.y >= cl.y0 - 0.35 * h && c.y + c.h <= cl.y1 + 0.35 * h;
        if (joins) {
          absorb(cl, c);
          used[i] = true;
          changed = true;
          break;
        }
      }
    });
  }
  return clusters.map((c) => c.parts);
}

/**
 * At least two of the row's pieces (and a third of them) go on across a removed ruling line: another
 * piece begins within RULE_GAP beyond its top or bottom, and the gap between them held the rule. Print
 * stands clear of the rules on a form; a signature is written across the line it is signed on.
 */
function crossedByRule(row: number[], comps: Component[], ruled: Uint8Array, w: number): boolean {
  let crossed = 0;
  for (const i of row) {
    const c = comps[i];
    const across = comps.some((p, j) => {
      if (j === i || p.x >= c.x + c.w || c.x >= p.x + p.w) return false;
      const below = p.y - (c.y + c.h),
        above = c.y - (p.y + p.h);
      if (below >= 0 && below <= RULE_GAP)
        return ruledBetween(ruled, w, Math.max(c.x, p.x), Math.min(c.x + c.w, p.x + p.w), c.y + c.h, p.y);
      if (above >= 0 && above <= RULE_GAP)
        return ruledBetween(ruled, w, Math.max(c.x, p.x), Math.min(c.x + c.w, p.x + p.w), p.y + p.h, c.y);
      return false;
    });
    if (across) crossed++;
  }
  return crossed >= 2 && 3 * crossed >= row.length;
}

/** Whether a removed rule's pixel lies in columns [x0, x1) and rows [y0, y1). */
function ruledBetween(ruled: Uint8Array, w: number, x0: number, x1: number, y0: number, y1: number): boolean {
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (ruled[y * w + x]) return true;
  return false;
}

/**
 * A signature written small (humps the size of print) can read as a row of text. A "row" that runs
 * straight out of a signature, within its height band, is taken back into it; print beside a
 * signature keeps its distance. So is a row that continues the signature's strokes across a removed
 * ruling line: a pen stroke struck through the name, long and straight enough to go as a rule, cuts its
 * letters in two, and the halves on one side line up like print. Their ends meet the other halves' ends
 * across the line's thickness, which print under or over a signature does not do. Candidates that then
 * overlap or lie within a seed's reach of each other are one signature.
 */
function absorbRows(wordGap: (h: number) => number, clusters: Component[][], rows: Component[][]): void {
  // The halves a struck-through line leaves may have seeded separate candidates: count meetings over all.
  const allParts = clusters.flat();
  for (const cl of clusters) {
    for (let changed = true; changed; ) {
      changed = false;
      const b = unionBox(cl);
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        if (row.length === 0) continue;
        const rb = unionBox(row);
        const gap = Math.max(rb.x - (b.x + b.w), b.x - (rb.x + rb.w));
        const inBand = rb.y >= b.y - 0.1 * b.h && rb.y + rb.h <= b.y + b.h + 0.1 * b.h;
        // Only a row that touches the candidate can continue it; the piece-by-piece test is for those.
        const touches = rb.x < b.x + b.w && b.x < rb.x + rb.w && rb.y <= b.y + b.h + RULE_GAP && b.y <= rb.y + rb.h + RULE_GAP;
        if ((gap <= 0.8 * b.h && inBand) || (touches && meetsAcrossRule(row, cl) > 0 && continuesAcrossRule(row, allParts))) {
          cl.push(...row);
          rows[r] = [];
          changed = true;
        }
      }
    }
  }
  // Boxes kept beside the clusters, so a page with many candidates costs pairs of boxes, not their parts.
  const boxes = clusters.map((cl) => unionBox(cl));
  for (let a = 0; a < clusters.length; a++) {
    for (let b = a + 1; b < clusters.length; b++) {
      const A = boxes[a],
        B = boxes[b];
      if (!overlaps(grown(A, wordGap(A.h), 0.25), B) && !overlaps(grown(B, wordGap(B.h), 0.25), A)) continue;
      clusters[a].push(...clusters[b]);
      boxes[a] = unionBox([A, B]);
      clusters.splice(b, 1);
      boxes.splice(b, 1);
      b = a;
    }
  }
}

/** How many of the row's pieces end where a piece of `parts` begins, across a rule's width. */
function meetsAcrossRule(row: Component[], parts: Component[]): number {
  let meeting = 0;
  for (const c of row) {
    const meets = parts.some(
      (p) => c.x < p.x + p.w && p.x < c.x + c.w && (Math.abs(c.y - (p.y + p.h)) <= RULE_GAP || Math.abs(p.y - (c.y + c.h)) <= RULE_GAP),
    );
    if (meets) meeting++;
  }
  return meeting;
}

/**
 * A third of the row's pieces (and two) continue strokes of `parts`: not all do, since a cut letter's
 * lower half may have grown into its neighbour's, or the pen left the line before the rule crossed it.
 */
function continuesAcrossRule(row: Component[], parts: Component[]): boolean {
  const meeting = meetsAcrossRule(row, parts);
  return meeting >= 2 && 3 * meeting >= row.length;
}

/** The box widened by fx and heightened by fy of its height on each side (growClusters' reach). */
function grown(b: Box, fx: number, fy: number): Box {
  return { x: b.x - fx * b.h, y: b.y - fy * b.h, w: b.w + 2 * fx * b.h, h: b.h + 2 * fy * b.h };
}

/** Below this orientation entropy (components.ts) a candidate's edges earn nothing for curving. */
const CURVE_FROM = 0.62;

/**
 * How much a candidate looks like handwriting: tall against the print, strokes turning through every
 * direction (`entropy`, its edges' orientation entropy), a sparse fill and a plausible shape.
 */
function scoreCandidate(box: Box, ink: number, unit: number, entropy: number): number {
  const clamp = (v: number) => Math.max(0, Math.min(1, v));
  const size = clamp((box.h / unit - 2) / 3);
  const curve = clamp((entropy - CURVE_FROM) / 0.25);
  const fill = ink / (box.w * box.h);
  const sparse = fill < 0.01 ? fill / 0.01 : fill > 0.45 ? clamp(1 - (fill - 0.45) / 0.3) : 1;
  const aspect = box.w / box.h;
  const shape = aspect < 0.4 ? aspect / 0.4 : aspect > 15 ? 15 / aspect : 1;
  const mass = clamp(ink / 80);
  return clamp((0.1 + 0.9 * (0.35 * size + 0.45 * curve + 0.2 * sparse)) * shape * mass);
}

/**
 * How much of a line of type keeps its line. Type sits on its baseline (Bengali and Devanagari type hang
 * from their headline) but for its descenders, about one letter in six in Latin text; but a letter of
 * type can come in pieces (a bar, a dot, a vowel sign) that end elsewhere. On a page a heading taken for
 * handwriting becomes a signature, so a tall row there is type when 0.6 of its pieces keep a line; a line
 * of letters alone on an image, whose letters are whole (a name), when 0.75 do.
 */
const PAGE_PRINT_LEVEL = 0.6;
const LINE_PRINT_LEVEL = 0.75;
/** Letters at least this share of the image's height are the image's subject, not print on it. */
const LARGE_LETTERS = 0.1;
/** The slope a levelled page can keep: ink-mask.ts turns it only past about a quarter of a degree. */
const MAX_DRIFT = 0.005;

/**
 * Do these letters keep a line as type does, where a hand strays by a few pixels? At least `level` of
 * them within a pixel of one straight line through their tops or their bottoms, along a fitted slope,
 * since a page levelled to a quarter of a degree still drifts a few pixels over a long line.
 */
function keepsALine(letters: Component[], level: number): boolean {
  const xs = letters.map((t) => t.x + t.w / 2);
  const tops = letters.map((t) => t.y),
    bottoms = letters.map((t) => t.y + t.h);
  return Math.max(shareOnLine(xs, tops), shareOnLine(xs, bottoms)) >= level;
}

/**
 * The share of the points within a pixel of the line through them: its slope the median of the pairwise
 * slopes, at most what levelling leaves (MAX_DRIFT), so that a few scattered letters do not line up along
 * a tilt of their own. Past EXACT_PAIRS points, only the pairs half the points apart (by x) are taken:
 * every pair of a long chain would cost quadratic time and memory.
 */
function shareOnLine(xs: number[], ys: number[]): number {
  const n = xs.length;
  const slopes: number[] = [];
  const slope = (i: number, j: number) => {
    if (xs[j] !== xs[i]) slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
  };
  if (n <= EXACT_PAIRS) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) slope(i, j);
  } else {
    const byX = xs.map((_, i) => i).sort((a, b) => xs[a] - xs[b]);
    const half = n >> 1;
    for (let k = 0; k + half < n; k++) slope(byX[k], byX[k + half]);
  }
  const s = Math.max(-MAX_DRIFT, Math.min(MAX_DRIFT, middleOf(slopes)));
  const offset = middleOf(ys.map((y, i) => y - s * xs[i]));
  return ys.filter((y, i) => Math.abs(y - s * xs[i] - offset) <= 1).length / n;
}

/** Up to this many points, every pair's slope (1,770 pairs). */
const EXACT_PAIRS = 60;

/** The middle value (the upper one of an even count); 0 for none. */
function middleOf(v: number[]): number {
  if (v.length === 0) return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1];
}
