import { ulid } from "ulidx";

/** A new id with a type prefix, e.g. `req_01J...`, `chk_01J...`. ULIDs sort by creation time. */
export function newId(prefix: string): string {
  return `${prefix}_${ulid()}`;
}
