import { describe, expect, it } from "vitest";
import { MAX_METADATA_DEPTH, Metadata, nestsAtMost } from "../../src/domain/check-request";

function nested(depth: number): Record<string, unknown> {
  // The object itself is level 1; each array inside adds one.
  let v: unknown = [];
  for (let i = 2; i < depth; i++) v = [v];
  return depth === 1 ? {} : { a: v };
}

describe("metadata nesting", () => {
  it("counts the object as level 1, and arrays and objects alike", () => {
    expect(nestsAtMost({}, 1)).toBe(true);
    expect(nestsAtMost({ a: 1, b: "x", c: null }, 1)).toBe(true);
    expect(nestsAtMost({ a: {} }, 1)).toBe(false);
    expect(nestsAtMost({ a: [{ b: [] }] }, 4)).toBe(true);
    expect(nestsAtMost({ a: [{ b: [] }] }, 3)).toBe(false);
  });

  it("accepts 32 levels and refuses 33, naming the depth; 100,000 levels do not overflow the check", () => {
    expect(Metadata.safeParse(nested(MAX_METADATA_DEPTH)).success).toBe(true);
    const deep = Metadata.safeParse(nested(MAX_METADATA_DEPTH + 1));
    expect(deep.success).toBe(false);
    expect(deep.error?.issues.map((i) => i.message)).toEqual([`must nest at most ${MAX_METADATA_DEPTH} levels deep`]);
    expect(nestsAtMost(nested(100_000), MAX_METADATA_DEPTH)).toBe(false);
  });

  it("still bounds the size", () => {
    expect(Metadata.safeParse({ a: "x".repeat(17 * 1024) }).success).toBe(false);
  });
});
