import { describe, expect, it } from "vitest";
import { buildUsageReport, parsePeriod } from "../../src/domain/usage";

// RFC 3339 date-time as the report writes it: a four-digit year, UTC.
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const now = new Date("2026-02-10T12:00:00Z");

describe("parsePeriod (GET /sig/usage?period=)", () => {
  it("means the current UTC month by `current`, with the days begun so far", () => {
    expect(parsePeriod("current", now)).toEqual({
      month: "2026-02",
      from: "2026-02-01T00:00:00.000Z",
      to: "2026-03-01T00:00:00.000Z",
      daysBegun: 10,
    });
  });

  it("means exactly the month named for years below 100, which Date.UTC would move to the 1900s", () => {
    expect(parsePeriod("0050-03", now)).toEqual({
      month: "0050-03",
      from: "0050-03-01T00:00:00.000Z",
      to: "0050-04-01T00:00:00.000Z",
      daysBegun: 31,
    });
    // The year's end rolls into the next year (0100), and year 0000 is a month like any other.
    expect(parsePeriod("0099-12", now)).toMatchObject({ from: "0099-12-01T00:00:00.000Z", to: "0100-01-01T00:00:00.000Z" });
    expect(parsePeriod("0000-01", now)).toMatchObject({
      month: "0000-01",
      from: "0000-01-01T00:00:00.000Z",
      to: "0000-02-01T00:00:00.000Z",
    });
    // 0004 is a leap year (every fourth year in the proleptic Gregorian calendar, 0000 too), 0100 is not.
    expect(parsePeriod("0004-02", now)!.daysBegun).toBe(29);
    expect(parsePeriod("0100-02", now)!.daysBegun).toBe(28);
  });

  it("labels the report's days with the month named", () => {
    const report = buildUsageReport(parsePeriod("0050-03", now)!, [], false);
    expect(report).toMatchObject({ period: "0050-03", from: "0050-03-01T00:00:00.000Z", to: "0050-04-01T00:00:00.000Z" });
    expect(report.daily).toHaveLength(31);
    expect(report.daily[0].date).toBe("0050-03-01");
    expect(report.daily.at(-1)!.date).toBe("0050-03-31");
  });

  it("writes from and to in RFC 3339 up to 9999-11, and refuses 9999-12, whose end (year 10000) RFC 3339 cannot write", () => {
    for (const raw of ["0000-01", "0050-03", "1999-12", "9999-11"]) {
      const p = parsePeriod(raw, now)!;
      expect(p.from).toMatch(RFC3339);
      expect(p.to).toMatch(RFC3339);
    }
    expect(parsePeriod("9999-11", now)!.to).toBe("9999-12-01T00:00:00.000Z");
    expect(parsePeriod("9999-12", now)).toBeNull();
  });

  it("counts no day of a future month, and refuses malformed periods", () => {
    expect(parsePeriod("2026-03", now)!.daysBegun).toBe(0);
    for (const raw of ["2026-13", "2026-00", "202611", "last", "2026-1", "-0001-01", "10000-01"]) expect(parsePeriod(raw, now)).toBeNull();
  });
});
