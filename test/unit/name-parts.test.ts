import { describe, expect, it } from "vitest";
import { MAX_RUNS, chooseRuns, lineRuns } from "../../src/verify/name-parts";
import type { Box } from "../../src/verify/types";

const at = (x: number, y: number, w: number, h: number, page = 1, confidence = 0.9) => ({ page, confidence, box: { x, y, w, h } as Box });

describe("lineRuns: boxes that may be the words of one name", () => {
  it("joins neighbours on one line within two heights, and gives their union", () => {
    const runs = lineRuns([at(100, 100, 200, 80), at(400, 110, 150, 60)]);
    expect(runs).toEqual([{ parts: [0, 1], box: { x: 100, y: 100, w: 450, h: 80 } }]);
  });

  it("does not join boxes further apart than two heights, on other lines, or on other pages", () => {
    expect(lineRuns([at(100, 100, 200, 80), at(461, 100, 150, 80)])).toEqual([]);
    expect(lineRuns([at(100, 100, 200, 80), at(350, 150, 150, 80)])).toEqual([]);
    expect(lineRuns([at(100, 100, 200, 80), at(350, 100, 150, 80, 2)])).toEqual([]);
  });

  it("gives three words as both pairs and the whole, shortest first, and never skips the box between", () => {
    const runs = lineRuns([at(500, 100, 100, 80), at(100, 100, 100, 80), at(300, 100, 100, 80)]);
    expect(runs.map((r) => r.parts)).toEqual([
      [1, 2],
      [2, 0],
      [1, 2, 0],
    ]);
    expect(runs[2].box).toEqual({ x: 100, y: 100, w: 500, h: 80 });
  });

  it("does not join words around a box off their line that their union would take in", () => {
    expect(lineRuns([at(100, 100, 200, 80), at(330, 150, 60, 80), at(420, 100, 150, 80)])).toEqual([]);
  });

  it("scores a bounded number of unions, the budget going first to runs holding surer boxes", () => {
    const row = Array.from({ length: 40 }, (_, i) => at(100 + i * 150, 100, 100, 80));
    expect(lineRuns(row)).toHaveLength(MAX_RUNS);
    expect(lineRuns(row, 2)).toHaveLength(2);
    expect(lineRuns(row, 0)).toEqual([]);
    // Ten rows of two words down a page; the surest pair is at the bottom.
    const rows = Array.from({ length: 10 }, (_, i) => [
      at(100, 100 + i * 150, 200, 80, 1, 0.5),
      at(350, 100 + i * 150, 200, 80, 1, i === 9 ? 0.95 : 0.5),
    ]).flat();
    expect(lineRuns(rows, 1)[0].parts).toEqual([18, 19]);
  });
});

describe("chooseRuns: the union is kept only where it matches better than each of its parts", () => {
  const runs = [{ parts: [0, 1] }, { parts: [1, 2] }, { parts: [0, 1, 2] }];

  it("keeps a union above both parts, and not one below the better part", () => {
    expect(chooseRuns([{ parts: [0, 1] }], [0.2, 0.3], [0.9])).toEqual([{ run: 0, score: 0.9 }]);
    expect(chooseRuns([{ parts: [0, 1] }], [0.8, 0.1], [0.6])).toEqual([]);
    expect(chooseRuns([{ parts: [0, 1] }], [0.8, 0.1], [0.8])).toEqual([]);
  });

  it("takes the best union first, and gives each part to one union at most", () => {
    expect(chooseRuns(runs, [0.1, 0.2, 0.1], [0.5, 0.4, 0.9])).toEqual([{ run: 2, score: 0.9 }]);
    expect(chooseRuns(runs, [0.1, 0.2, 0.1], [0.7, 0.6, null])).toEqual([{ run: 0, score: 0.7 }]);
  });

  it("counts an unreadable part as no match, and never keeps a union that was not compared", () => {
    expect(chooseRuns([{ parts: [0, 1] }], [null, 0.3], [0.5])).toEqual([{ run: 0, score: 0.5 }]);
    expect(chooseRuns([{ parts: [0, 1] }], [0.1, 0.1], [null])).toEqual([]);
  });
});
