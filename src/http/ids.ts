import { monotonicFactory } from "ulidx";

// Monotonic within an isolate: ids minted in the same millisecond still sort in creation order, which
// newest-first lists (audit log, jobs) rely on to break created_at ties.
const nextUlid = monotonicFactory();

/** A new id with a type prefix, e.g. `req_01J...`, `chk_01J...`. ULIDs sort by creation time. */
export function newId(prefix: string): string {
  return `${prefix}_${nextUlid()}`;
}
