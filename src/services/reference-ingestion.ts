/**
 * Enrolling a subject's references for one request: fetching the references given by URL (all under
 * one shared deadline and the organisation's URL policy), then enrolment itself (services/enrolment.ts)
 * with the engine and queue of this deployment. Free of HTTP: the route validates the body first.
 */
import type { Config } from "../config";
import type { Env } from "../env";
import { MAX_REFERENCE_BYTES, type ReferenceSource } from "../domain/enrolment";
import type { Org, RegionStore } from "../domain/tenancy";
import { fetchDocument, newFetchBudget } from "../fetch/url-fetch";
import { ProblemError, fieldName } from "../http/problem";
import { deleteReference, enrolUploads, type EnrolMessage, type Upload } from "./enrolment";
import type { VerificationEngine } from "./engine";
import { urlPolicyOf } from "./url-policy";

export interface ReferenceIngestionScope {
  env: Env;
  org: Org;
  store: RegionStore;
  engine: VerificationEngine;
  urlFetch: Config["urlFetch"];
}

export function referenceIngestion({ env, org, store, engine, urlFetch }: ReferenceIngestionScope) {
  return {
    /** Fetches each reference's URL (`body.references.<i>.url` names it in problems) into an upload. */
    async fetchUploads(references: { ref_id: string; url: string; source: ReferenceSource }[]): Promise<Upload[]> {
      const policy = urlPolicyOf(org, env);
      const budget = newFetchBudget({
        deadlineMs: urlFetch.deadlineMs,
        stallWindowMs: urlFetch.stallWindowMs,
        maxBytes: MAX_REFERENCE_BYTES,
      });
      const fetched = await Promise.all(
        references.map((r, i) => fetchDocument(r.url, fieldName("body", "references", i, "url"), policy, budget)),
      );
      const total = fetched.reduce((n, f) => n + f.bytes.byteLength, 0);
      if (total > MAX_REFERENCE_BYTES) {
        throw new ProblemError("too_large", `The reference files exceed ${MAX_REFERENCE_BYTES / 1024 / 1024} MB in total.`);
      }
      return references.map((r, i) => ({
        refId: r.ref_id,
        source: r.source,
        bytes: fetched[i].bytes,
        contentType: fetched[i].contentType ?? "application/octet-stream",
        method: "url" as const,
        sourceUrl: r.url,
      }));
    },

    enrol(subjectReference: string, uploads: Upload[]) {
      return enrolUploads({ store, engine, queue: env.ENROL_QUEUE as Queue<EnrolMessage> }, org.id, subjectReference, uploads);
    },

    remove(subjectReference: string, refId: string) {
      return deleteReference({ store, engine }, org.id, subjectReference, refId);
    },
  };
}

export type ReferenceIngestion = ReturnType<typeof referenceIngestion>;
