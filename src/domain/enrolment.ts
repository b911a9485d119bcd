/**
 * The rules of enrolment (spec 2.1, 4.3, 8), free of HTTP and storage: which reference ids are
 * acceptable, the request limits, and which uploads are enrolled now versus queued.
 */
import { isValidId } from "./ids";

export const MAX_REFERENCE_FILES = 20;
export const MAX_REFERENCE_BYTES = 20 * 1024 * 1024;
/** References enrolled within the request; the rest are queued. */
export const SYNC_ENROL_LIMIT = 3;

export const REFERENCE_SOURCES = ["signature_card", "confirmed_past", "unverified"] as const;
export type ReferenceSource = (typeof REFERENCE_SOURCES)[number];
export const DEFAULT_REFERENCE_SOURCE: ReferenceSource = "unverified";

/** Why a ref_id cannot be enrolled by a caller, or null when it can. */
export function refIdProblem(refId: string): string | null {
  if (!isValidId(refId)) return "must be 1 to 128 characters of [A-Za-z0-9._-], and not '.' or '..'";
  if (refId.startsWith(".")) return "must not start with '.' (reserved)";
  if (refId.startsWith("learned-")) return "must not start with 'learned-' (reserved for learned references)";
  return null;
}

export function isReferenceSource(s: string): s is ReferenceSource {
  return (REFERENCE_SOURCES as readonly string[]).includes(s);
}

/** Splits uploads, in request order, into those enrolled now and those queued. */
export function splitSyncAndQueued<T>(uploads: T[]): { now: T[]; queued: T[] } {
  return { now: uploads.slice(0, SYNC_ENROL_LIMIT), queued: uploads.slice(SYNC_ENROL_LIMIT) };
}

/** Why a reference was not enrolled. */
export type RejectionReason =
  | "no_signature"
  | "unreadable"
  | "unsupported_format"
  | "corrupt_file"
  | "too_large"
  | "too_many_pixels"
  | "too_many_pages"
  | "no_raster_content"
  /** The enrolment queue gave up on it after its retries. */
  | "processing_failed"
  /**
   * A live reference whose features could not be extracted again for a new version of the core: its file
   * is gone, or no longer yields a usable signature (services/feature-upgrade.ts, docs/feature-upgrades.md).
   */
  | "upgrade_failed";

export type ReferenceOutcome =
  | {
      ref_id: string;
      status: "enrolled";
      source: ReferenceSource;
      replaced: boolean;
      quality: number | null;
      page: number;
      box: { x: number; y: number; w: number; h: number };
    }
  | { ref_id: string; status: "rejected"; source: ReferenceSource; reason: RejectionReason; detail: string }
  | { ref_id: string; status: "queued"; source: ReferenceSource };

/**
 * Why a live reference left the model when the core's features changed (reason `upgrade_failed`): what
 * the subject view shows, so the caller knows which reference to upload again and why.
 */
export function upgradeFailureDetail(
  cause: { kind: "file_missing" } | { kind: "rejected"; reason: string; detail: string },
  featureVersion: number,
): string {
  const what = `The engine's features changed (feature version ${featureVersion}) and this reference's features had to be extracted again from its stored file`;
  return cause.kind === "file_missing"
    ? `${what}, but the file is gone. Upload it again.`
    : `${what}, which no longer yields a usable signature (${cause.reason}: ${cause.detail}). Upload another.`;
}

/**
 * A queued upload of a ref_id whose reference is live (spec part 3: an upload replaces that ref_id). It
 * waits beside the live reference, which stays in the model and keeps its file until the new file is
 * enrolled; a rejected replacement is kept here to be seen (with its reason) and the live reference stays.
 * Stored as JSON on the reference's row.
 */
export interface Replacement {
  uploadId: string;
  fileKey: string;
  contentType: string;
  byteSize: number;
  sha256: string;
  source: ReferenceSource;
  method: "upload" | "url";
  sourceUrl: string | null;
  createdAt: string;
  status: "queued" | "rejected";
  rejectedReason: string | null;
  rejectedDetail: string | null;
}

/** The stored replacement, or null (none, or not one this version wrote). */
export function parseReplacement(json: string | null | undefined): Replacement | null {
  if (!json) return null;
  try {
    const r = JSON.parse(json) as Replacement;
    return typeof r?.uploadId === "string" && typeof r.fileKey === "string" ? r : null;
  } catch {
    return null;
  }
}

/** What a rejected replacement's detail adds: the reference the caller still has. */
export function keptLiveDetail(detail: string, refId: string): string {
  return `${detail} The reference enrolled before under ${refId} stays live.`;
}
