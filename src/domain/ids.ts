import { monotonicFactory } from "ulidx";

// Monotonic within an isolate: ids minted in the same millisecond still sort in creation order, which
// newest-first lists (audit log, jobs) rely on to break created_at ties.
const nextUlid = monotonicFactory();

/** A new id with a type prefix, e.g. `req_01J...`, `chk_01J...`. ULIDs sort by creation time. */
export function newId(prefix: string): string {
  return `${prefix}_${nextUlid()}`;
}

/** Identifier rule of spec 2.1: 1 to 128 of [A-Za-z0-9._-], never "." or "..". */
export const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export function isValidId(s: string): boolean {
  return ID_PATTERN.test(s) && s !== "." && s !== "..";
}
