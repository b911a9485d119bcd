import { describe, expect, it } from "vitest";
import { rfc3339Millis } from "../../src/domain/rfc3339";

const at = (s: string) => {
  const ms = rfc3339Millis(s);
  return ms === null ? null : new Date(ms).toISOString();
};

describe("rfc3339Millis", () => {
  it("reads RFC 3339 date-times, in either case and with any offset", () => {
    expect(at("2026-11-28T22:35:22.504Z")).toBe("2026-11-28T22:35:22.504Z");
    expect(at("2026-11-28t22:35:22.504z")).toBe("2026-11-28T22:35:22.504Z");
    expect(at("2026-11-28T23:35:22+01:00")).toBe("2026-11-28T22:35:22.000Z");
    expect(at("0050-01-01T00:00:00Z")).toBe("0050-01-01T00:00:00.000Z");
  });

  it("rounds digits below the millisecond up, so bounds compare exactly with times stored to the millisecond", () => {
    expect(at("2026-11-28T22:35:22.5041Z")).toBe("2026-11-28T22:35:22.505Z");
    expect(at("2026-11-28T22:35:22.504999Z")).toBe("2026-11-28T22:35:22.505Z");
    expect(at("2026-11-28T22:35:22.5040000Z")).toBe("2026-11-28T22:35:22.504Z");
    expect(at("2026-11-28T22:35:22.5Z")).toBe("2026-11-28T22:35:22.500Z");
  });

  it("takes a leap second as the instant the next second begins", () => {
    expect(at("2016-12-31T23:59:60Z")).toBe("2017-01-01T00:00:00.000Z");
    expect(at("2016-12-31T23:59:60.5Z")).toBe("2017-01-01T00:00:00.000Z");
  });

  it("refuses what is not one", () => {
    for (const s of [
      "2026-02-30T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-11-28T24:00:00Z",
      "2026-11-28T22:61:00Z",
      "2026-11-28T22:35:61Z",
      "2026-11-28 22:35:22Z",
      "2026-11-28T22:35:22",
      "2026-11-28T22:35:22+24:00",
      "2026-11-28",
      "",
    ]) {
      expect([s, rfc3339Millis(s)]).toEqual([s, null]);
    }
  });
});
