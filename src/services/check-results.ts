/**
 * The CheckResult: what one checked item yields, stored once as JSON with the item and rendered with
 * the caller's base URL (image links) when read.
 */
import type { Box } from "../verify/types";
import { checkId } from "../domain/job";
import { isBillable } from "../domain/usage";
import type { CheckedDocument, CheckQuality } from "./engine";
import type { CheckItemRow } from "../storage/schema/checks";

export interface ItemError {
  code: string;
  detail: string;
}

/** The stored form of a CheckResult (no URLs: those depend on the address the caller used). */
export interface StoredResult {
  check_id: string;
  job_id: string;
  item_index: number;
  decision: CheckedDocument["decision"] | null;
  score: number | null;
  billable: boolean;
  subject_reference: string | null;
  reference: string | null;
  process: string | null;
  input_type: string | null;
  file_name: string | null;
  pages: number | null;
  /** `cut_off` is absent on results stored before it was reported. */
  signatures: {
    index: number;
    page: number;
    box: Box;
    confidence: number;
    score: number | null;
    cut_off?: boolean;
    box_name?: string | null;
  }[];
  best_match: { signature_index: number; ref_id: string; score: number } | null;
  regions: { box: Box; deviation: number }[];
  quality: CheckQuality | null;
  reference_count: number | null;
  versions: { policy: string };
  metadata: Record<string, unknown> | null;
  errors: ItemError[];
  /** Present when the item named a template_id (absent on results stored before templates existed). */
  template?: TemplateOutcome | null;
  created_at: string;
  completed_at: string;
}

/** How a template was applied to an item. */
export interface TemplateOutcome {
  template_id: string;
  /** True when every page searched with the template registered to the blank. */
  registered: boolean;
  pages: { page: number; registered: boolean }[];
  /** Why the template was not (fully) used, when it was not. */
  detail: string | null;
}

/** Box names of a template, by 1-based blank page, in the order of that page's model. */
export type TemplateBoxNames = Record<number, string[]>;

/** The template outcome of a checked document. */
export function templateOutcome(templateId: string, doc: Pick<CheckedDocument, "registration">): TemplateOutcome {
  const pages = doc.registration ?? [];
  const failed = pages.filter((p) => !p.registered).map((p) => p.page);
  const registered = pages.length > 0 && failed.length === 0;
  let detail: string | null = null;
  if (pages.length === 0)
    detail =
      "no page was searched with the template (the document lacks the template's pages, or it was unreadable); the document was searched without it";
  else if (failed.length > 0)
    detail = `page(s) ${failed.join(", ")} did not register to the blank form; they were searched without the template`;
  return { template_id: templateId, registered, pages, detail };
}
export interface ItemBasics {
  jobId: string;
  index: number;
  subjectReference: string | null;
  reference: string | null;
  process: string | null;
  inputType: string | null;
  fileName: string | null;
  metadata: Record<string, unknown> | null;
  policy: string;
  createdAt: string;
}

function base(
  b: ItemBasics,
): Omit<
  StoredResult,
  | "decision"
  | "score"
  | "billable"
  | "pages"
  | "signatures"
  | "best_match"
  | "regions"
  | "quality"
  | "reference_count"
  | "errors"
  | "completed_at"
> {
  return {
    check_id: checkId(b.jobId, b.index),
    job_id: b.jobId,
    item_index: b.index,
    subject_reference: b.subjectReference,
    reference: b.reference,
    process: b.process,
    input_type: b.inputType,
    file_name: b.fileName,
    versions: { policy: b.policy },
    metadata: b.metadata,
    created_at: b.createdAt,
  };
}

export function decidedResult(
  b: ItemBasics,
  doc: CheckedDocument,
  referenceCount: number | null,
  template?: { templateId: string; names: TemplateBoxNames },
): StoredResult {
  const boxName = (s: CheckedDocument["signatures"][number]) => (s.zone === undefined ? null : (template?.names[s.page]?.[s.zone] ?? null));
  return {
    ...base(b),
    decision: doc.decision,
    score: doc.score,
    billable: isBillable(doc.decision),
    pages: doc.pages,
    signatures: doc.signatures.map((s) => ({
      index: s.index,
      page: s.page,
      box: s.box,
      confidence: s.confidence,
      score: s.score ?? null,
      cut_off: s.cut_off,
      ...(template ? { box_name: boxName(s) } : {}),
    })),
    best_match: doc.best ? { signature_index: doc.best.signatureIndex, ref_id: doc.best.refId, score: doc.best.score } : null,
    regions: doc.regions,
    quality: doc.quality,
    reference_count: referenceCount,
    errors: [],
    ...(template ? { template: templateOutcome(template.templateId, doc) } : {}),
    completed_at: new Date().toISOString(),
  };
}

/** An item that got no decision: free of charge, counted as ERROR. */
export function errorResult(b: ItemBasics, error: ItemError, pages: number | null = null): StoredResult {
  return {
    ...base(b),
    decision: null,
    score: null,
    billable: false,
    pages,
    signatures: [],
    best_match: null,
    regions: [],
    quality: null,
    reference_count: null,
    errors: [error],
    completed_at: new Date().toISOString(),
  };
}

/** The signature the crop shows by default: the best match, else the first. */
export function defaultSignature(r: Pick<StoredResult, "signatures" | "best_match">): number | null {
  if (r.best_match) return r.best_match.signature_index;
  return r.signatures[0]?.index ?? null;
}

/** A stored result as the API returns it: with image links, and without metadata in lists. */
export function renderResult(r: StoredResult, baseUrl: string, opts: { metadata: boolean } = { metadata: true }) {
  const itemUrl = `${baseUrl}/sig/checks/${r.job_id}/items/${r.item_index}`;
  const { metadata, ...rest } = r;
  return {
    ...rest,
    signatures: r.signatures.map((s) => ({ ...s, image_url: `${itemUrl}/image?signature=${s.index}` })),
    image_url: defaultSignature(r) === null ? null : `${itemUrl}/image`,
    ...(opts.metadata ? { metadata } : {}),
  };
}
export type RenderedResult = ReturnType<typeof renderResult>;

export function storedResultOf(row: Pick<CheckItemRow, "result">): StoredResult | null {
  return row.result ? (JSON.parse(row.result) as StoredResult) : null;
}
