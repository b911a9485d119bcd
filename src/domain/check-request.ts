/**
 * CheckRequest, the input of POST /sig/checks (spec 2.4; the members the spec leaves unshown are
 * designed here), and the rules that zod alone cannot state: which file parts an item names, that an
 * item has something to compare with, and the normalised form the service stores with the job.
 */
import { z } from "zod";
import { ID_PATTERN, isValidId } from "./ids";

export const MAX_ITEMS = 100;
export const MAX_ITEM_REFERENCES = 20;
export const MAX_METADATA_BYTES = 16 * 1024;
export const MAX_METADATA_DEPTH = 32;
/** One document at most (the body limit is 51 MB: a 50 MB document plus multipart framing). */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

const Identifier = z
  .string()
  .regex(ID_PATTERN, "must be 1 to 128 characters of [A-Za-z0-9._-]")
  .refine((s) => s !== "." && s !== "..", "must not be '.' or '..'");

/** A file part name: an identifier that does not start with `.` (reserved). */
const PartName = Identifier.refine((s) => !s.startsWith("."), "must not start with '.' (reserved)").describe(
  "Name of a file part of the multipart body",
);

const UrlInput = z
  .strictObject({
    url: z.string().min(1).max(2048, "must be at most 2048 characters").describe("https URL on the tenant's allowlisted hosts or buckets"),
  })
  .describe("A document fetched once by URL");

export const FileInput = z.union([PartName, UrlInput]);
export type FileInputValue = z.infer<typeof FileInput>;

/**
 * Whether `value` nests objects and arrays at most `max` deep (the metadata object itself is depth 1).
 * Iterative: the value can be thousands deep, and a recursive walk would overflow the stack on it.
 */
export function nestsAtMost(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth + 1 > max) return false;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return true;
}

/**
 * The caller's metadata (checks, their items, sessions, bucket-drop manifests): at most 16 KB as JSON and
 * 32 levels deep. Without the depth bound, 13 KB of nested brackets passed and then overflowed the stack
 * wherever the stored job was serialised again (the check ran as a failure, its reads answered 500).
 */
export const Metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => nestsAtMost(m, MAX_METADATA_DEPTH), { message: `must nest at most ${MAX_METADATA_DEPTH} levels deep`, abort: true })
  .refine(
    (m) => new TextEncoder().encode(JSON.stringify(m)).byteLength <= MAX_METADATA_BYTES,
    `must be at most ${MAX_METADATA_BYTES} bytes as JSON`,
  )
  .describe("Caller's own data, returned on reading the item; never searched, omitted from lists");

const BoxInput = z.strictObject({
  x: z.number().int().min(0),
  y: z.number().int().min(0),
  w: z.number().int().min(1),
  h: z.number().int().min(1),
});

export const CheckItemInput = z.strictObject({
  file: FileInput.describe("The document: a file part name, or {url}"),
  file_name: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Name to record for the file (default: the part's file name or the URL's last segment)"),
  subject_reference: Identifier.optional().describe("The subject whose references the signature is compared with"),
  references: z
    .array(FileInput)
    .min(1)
    .max(MAX_ITEM_REFERENCES)
    .optional()
    .describe("References for this item only, overriding the subject's (file part names or {url})"),
  target: z
    .strictObject({
      page: z.number().int().min(1).optional().describe("1-based page to search"),
      box: BoxInput.optional().describe("Rectangle in page pixels to search"),
    })
    .optional()
    .describe("Where the signature is"),
  template_id: Identifier.optional().describe("A form template that tells where signatures are"),
  input_type: z
    .string()
    .regex(/^[a-z_]{1,32}$/, "must be 1 to 32 characters of [a-z_]")
    .optional()
    .describe(
      "photo, scan, form, signature_image, ... signature_image takes all the ink as one signature; anything else searches the page. Omitted: an image at most 2000 px long that holds no print or stamp is taken as a signature image, anything else is searched",
    ),
  reference: z.string().min(1).max(128).optional().describe("The caller's check reference (exact filter in lists)"),
  process: z.string().min(1).max(64).optional().describe("The business process (exact filter in lists)"),
  metadata: Metadata.optional().describe("This item's metadata, replacing (not merged with) the request's metadata on its result"),
});
export type CheckItemInputValue = z.infer<typeof CheckItemInput>;

export const CheckRequestSchema = z.strictObject({
  items: z.array(CheckItemInput).min(1, "must hold at least one item").max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`),
  policy: Identifier.optional().describe("Policy name; its latest version applies (default `default`)"),
  metadata: Metadata.optional().describe(
    "Caller's own data, kept on the job and shown on each item's result that has no metadata of its own; never searched, omitted from lists",
  ),
  job_id: Identifier.optional().describe("The job's id; default the Idempotency-Key"),
});
export type CheckRequest = z.infer<typeof CheckRequestSchema>;

/** A normalised input: a stored file part or a URL. */
export type InputSource = { part: string } | { url: string };

/** An item as stored with the job and processed by the pipeline. */
export interface NormalisedItem {
  index: number;
  file: InputSource;
  fileName: string | null;
  subjectReference: string | null;
  references: InputSource[];
  target: { page?: number; box?: { x: number; y: number; w: number; h: number } } | null;
  templateId: string | null;
  inputType: string | null;
  reference: string | null;
  process: string | null;
  metadata: Record<string, unknown> | null;
}

export interface RequestProblem {
  /** The member's path in the CheckRequest, e.g. ["items", 0]. */
  path: (string | number)[];
  message: string;
}

function source(f: FileInputValue): InputSource {
  return typeof f === "string" ? { part: f } : { url: f.url };
}

/**
 * Normalises a parsed CheckRequest. Returns the first problem instead when an item has nothing to
 * compare with, or (for JSON bodies, `partsAllowed` false) names a file part.
 */
export function normaliseRequest(req: CheckRequest, partsAllowed: boolean): { items: NormalisedItem[] } | { problem: RequestProblem } {
  const items: NormalisedItem[] = [];
  for (const [i, it] of req.items.entries()) {
    if (!it.subject_reference && !it.references) {
      return { problem: { path: ["items", i], message: "needs a subject_reference or references to compare with" } };
    }
    if (!partsAllowed) {
      const named = [it.file, ...(it.references ?? [])].find((f) => typeof f === "string");
      if (named !== undefined) {
        return {
          problem: {
            path: ["items", i],
            message: `names the file part ${JSON.stringify(named)}, but a JSON body carries only {url} inputs (send multipart/form-data)`,
          },
        };
      }
    }
    items.push({
      index: i,
      file: source(it.file),
      fileName: it.file_name ?? null,
      subjectReference: it.subject_reference ?? null,
      references: (it.references ?? []).map(source),
      target: it.target ?? null,
      templateId: it.template_id ?? null,
      inputType: it.input_type ?? null,
      reference: it.reference ?? null,
      process: it.process ?? null,
      metadata: it.metadata ?? null,
    });
  }
  return { items };
}

/** The file part names a request uses, each once. */
export function partNames(items: NormalisedItem[]): string[] {
  const names = new Set<string>();
  for (const it of items) for (const s of [it.file, ...it.references]) if ("part" in s) names.add(s.part);
  return [...names];
}

/** A job id from an Idempotency-Key, when the key is itself a valid identifier. */
export function jobIdFromKey(key: string): string | null {
  return isValidId(key) ? key : null;
}

/** The file name recorded for an input: given, else the part's file name, else the URL's last segment. */
export function defaultFileName(src: InputSource, partFileName: string | null): string | null {
  if ("part" in src) return partFileName || src.part;
  try {
    const last = new URL(src.url).pathname.split("/").filter(Boolean).pop();
    return last ? decodeURIComponent(last).slice(0, 255) : null;
  } catch {
    return null;
  }
}
