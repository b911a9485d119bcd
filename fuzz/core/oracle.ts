/**
 * What counts as a finding. Decoders: only VerifyError may escape (the routes map it to a problem
 * document); anything else reaches the error handler as a 500. HTTP: any 5xx, any status the interface
 * spec does not list for the route, an error that is not a problem document, and a conforming body
 * refused as malformed.
 */
import { openDocument } from "../../src/verify/decode";
import { VerifyError } from "../../src/verify/types";
import type { DecodeOutcome, HttpRequestCase } from "./types";

/** Pages decoded per document: the upload path decodes page 0; a few more widen coverage cheaply. */
export const PAGES_PER_CASE = 3;

export async function decodeOutcome(bytes: Uint8Array): Promise<DecodeOutcome> {
  try {
    const doc = await openDocument(bytes);
    let pages = 0;
    let firstError: VerifyError | null = null;
    for (let i = 0; i < Math.min(doc.pageCount, PAGES_PER_CASE); i++) {
      try {
        await doc.decodePage(i);
        pages++;
      } catch (err) {
        if (!(err instanceof VerifyError)) throw err;
        firstError ??= err;
      }
    }
    return firstError && pages === 0 ? { kind: "typed", code: firstError.code } : { kind: "ok", pages };
  } catch (err) {
    if (err instanceof VerifyError) return { kind: "typed", code: err.code };
    const e = err as Error;
    return { kind: "untyped", error: `${e?.name ?? "Error"}: ${String(e?.message ?? err).slice(0, 300)}` };
  }
}

/** Statuses the interface spec lists for each route (part 5); 503 and 504 are findings here. */
export const DOCUMENTED_STATUSES: Record<HttpRequestCase["route"], number[]> = {
  checks: [200, 202, 400, 401, 402, 403, 408, 409, 413, 415, 421, 422, 429],
  references: [200, 202, 400, 401, 403, 413, 415, 421, 422, 429],
};

export type HttpFindingKind = "5xx" | "undocumented_status" | "not_problem_json" | "refused_well_formed";

export function httpFinding(c: HttpRequestCase, status: number, contentType: string | null): HttpFindingKind | null {
  if (status >= 500) return "5xx";
  if (!DOCUMENTED_STATUSES[c.route].includes(status)) return "undocumented_status";
  if (status >= 400 && !(contentType ?? "").includes("application/problem+json")) return "not_problem_json";
  if (c.expect === "well-formed" && status === 400) return "refused_well_formed";
  return null;
}
