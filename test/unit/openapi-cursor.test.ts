import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/http/cursor";
import { ProblemError } from "../../src/http/problem";

const secret = "cursor-test-secret";

async function problemOf(p: Promise<unknown>): Promise<ProblemError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error("expected a ProblemError");
}

describe("cursors", () => {
  const position = { created_at: "2026-11-22T00:00:00.000Z", id: "chk_01JABC" };

  it("round-trips a position for the issuing route and is opaque", async () => {
    const cursor = await encodeCursor(secret, "GET /sig/checks?view=jobs", position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain("chk_01JABC");
    expect(await decodeCursor(secret, "GET /sig/checks?view=jobs", cursor)).toEqual(position);
  });

  it("refuses a cursor from another route", async () => {
    const cursor = await encodeCursor(secret, "GET /sig/checks?view=jobs", position);
    const err = await problemOf(decodeCursor(secret, "GET /sig/subjects", cursor));
    expect(err.code).toBe("invalid_cursor");
    expect(err.status).toBe(400);
    expect(err.extensions.errors?.[0].field).toBe("query.cursor");
  });

  it("refuses an altered, forged or garbled cursor", async () => {
    const cursor = await encodeCursor(secret, "r", position);
    const [payload, mac] = cursor.split(".");
    const forgedPayload = btoa(JSON.stringify({ r: "r", p: { id: "chk_0" } }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    const otherKey = await encodeCursor("another-secret", "r", position);
    for (const bad of [`${forgedPayload}.${mac}`, `${payload}.${mac.slice(0, -2)}AA`, otherKey, "garbage", "", "a.b.c", "%%%.###"]) {
      const err = await problemOf(decodeCursor(secret, "r", bad));
      expect(err.code, bad).toBe("invalid_cursor");
    }
  });
});
