import { z } from "@hono/zod-openapi";

/**
 * zod's messages in our own words. A problem's detail reads `<field>: <message>`, so each message is the
 * rest of a sentence about the member ("must be at most 100"), not zod's "Too big: expected number to be
 * <=100". Set once for every schema; a message a schema states itself still wins.
 */

type Issue = z.core.$ZodRawIssue;

const TYPES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  date: "a date",
  file: "a file",
  null: "null",
};

const FORMATS: Record<string, string> = {
  datetime: "an RFC 3339 date-time",
  date: "a date (YYYY-MM-DD)",
  time: "a time (HH:MM:SS)",
  url: "a URL",
  email: "an email address",
  uuid: "a UUID",
  ulid: "a ULID",
  base64: "base64",
  base64url: "base64url",
};

/** What a size bound counts, by the kind of value bounded. */
const UNITS: Record<string, string> = { string: "characters", array: "items", set: "items", map: "entries", file: "bytes" };

function list(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
}

function bound(issue: { origin?: string; exact?: boolean; inclusive?: boolean }, limit: unknown, most: boolean): string {
  const unit = issue.origin ? UNITS[issue.origin] : undefined;
  const n = `${String(limit)}${unit ? ` ${unit}` : ""}`;
  const verb = unit && unit !== "characters" && unit !== "bytes" ? "hold" : "be";
  if (issue.exact) return `must ${verb} exactly ${n}`;
  if (most) return issue.inclusive === false ? `must ${verb} fewer than ${n}` : `must ${verb} at most ${n}`;
  if (issue.origin === "string" && Number(limit) === 1 && issue.inclusive !== false) return "must not be empty";
  return issue.inclusive === false ? `must ${verb} more than ${n}` : `must ${verb} at least ${n}`;
}

export function plainMessage(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${TYPES[issue.expected] ?? issue.expected}`;
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${list(issue.values)}` : `must be one of ${list(issue.values)}`;
    case "too_big":
      return bound(issue, issue.maximum, true);
    case "too_small":
      return bound(issue, issue.minimum, false);
    case "invalid_format":
      if (issue.format === "regex" && "pattern" in issue) return `must match ${String(issue.pattern)}`;
      if (issue.format === "starts_with" && "prefix" in issue) return `must start with ${JSON.stringify(issue.prefix)}`;
      if (issue.format === "ends_with" && "suffix" in issue) return `must end with ${JSON.stringify(issue.suffix)}`;
      if (issue.format === "includes" && "includes" in issue) return `must contain ${JSON.stringify(issue.includes)}`;
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return `holds ${issue.keys.length === 1 ? "a member" : "members"} it does not take: ${issue.keys.join(", ")}`;
    case "invalid_key":
      return "holds a key it does not take";
    case "invalid_element":
      return "holds a value it does not take";
    case "invalid_union":
      return "matches none of the forms it takes";
    default:
      return "is invalid";
  }
}

z.config({ customError: plainMessage });
