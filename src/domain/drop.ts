/**
 * Bucket drops, the rules free of storage: how a key in a tenant's drop area is read, and the manifest.
 *
 *   orgs/<org_id>/drops/batches/<batch>/manifest.json   a batch: the manifest names each file of the folder
 *   orgs/<org_id>/drops/batches/<batch>/<file>           a file of a batch (starts nothing by itself)
 *   orgs/<org_id>/drops/batches/<batch>/summary.json     written by the service when the batch's job ends
 *   orgs/<org_id>/drops/inbox/<subject_reference>/<file> one file, checked against that subject, default policy
 *   orgs/<org_id>/drops/inbox/<subject_reference>/<file>.summary.json   its summary
 *
 * Anything else in the drop area gets a `<key>.summary.json` saying why it was not checked.
 */
import { z } from "zod";
import { ID_PATTERN } from "../domain/ids";
import { CheckItemInput, MAX_ITEMS, Metadata } from "./check-request";

export const MANIFEST_NAME = "manifest.json";
export const SUMMARY_NAME = "summary.json";
export const SUMMARY_SUFFIX = ".summary.json";
/** A manifest is small: 100 items with their metadata fit well below this. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

export type DropKey =
  | { kind: "manifest"; orgId: string; folder: string; batch: string }
  | { kind: "batch_file"; orgId: string; folder: string; batch: string; name: string }
  | { kind: "single"; orgId: string; folder: string; subjectReference: string; name: string }
  | { kind: "output" }
  | { kind: "unsupported"; orgId: string; reason: string };

const isId = (s: string) => ID_PATTERN.test(s) && s !== "." && s !== "..";

/** What a key in a drop area is. Null: not in any drop area. */
export function readDropKey(key: string): DropKey | null {
  const m = /^(orgs\/(org_[0-9A-Z]{26})\/drops\/)(.*)$/.exec(key);
  if (!m) return null;
  const [, root, orgId, rest] = m;
  const name = rest.split("/").pop() ?? "";
  // The service's own outputs, and folder markers some tools write, start nothing.
  if (name === SUMMARY_NAME || name.endsWith(SUMMARY_SUFFIX) || rest.endsWith("/") || rest === "") return { kind: "output" };
  const parts = rest.split("/");
  if (parts[0] === "batches" && parts.length >= 3) {
    const batch = parts[1];
    if (!isId(batch))
      return {
        kind: "unsupported",
        orgId,
        reason: `the batch folder name ${JSON.stringify(batch)} is not 1 to 128 characters of [A-Za-z0-9._-]`,
      };
    const folder = `${root}batches/${batch}/`;
    const inner = parts.slice(2).join("/");
    if (inner === MANIFEST_NAME) return { kind: "manifest", orgId, folder, batch };
    return { kind: "batch_file", orgId, folder, batch, name: inner };
  }
  if (parts[0] === "inbox" && parts.length === 3) {
    const subject = parts[1];
    if (!isId(subject))
      return {
        kind: "unsupported",
        orgId,
        reason: `the folder name ${JSON.stringify(subject)} is not a subject_reference (1 to 128 characters of [A-Za-z0-9._-])`,
      };
    // As for a manifest's files (spec 2.1): a name starting with `.` is reserved, not a document to check.
    if (parts[2].startsWith("."))
      return { kind: "unsupported", orgId, reason: `the file name ${JSON.stringify(parts[2])} starts with ".", which is reserved` };
    return { kind: "single", orgId, folder: `${root}inbox/${subject}/`, subjectReference: subject, name: parts[2] };
  }
  return {
    kind: "unsupported",
    orgId,
    reason: "files are checked only in batches/<batch>/ (with a manifest.json) or in inbox/<subject_reference>/ (one check per file)",
  };
}

/** A file named by a manifest: relative to the batch folder, no `..`, no segment starting with `.`. */
const ManifestFile = z
  .string()
  .min(1)
  .max(512)
  .refine(
    (s) => s.split("/").every((seg) => seg.length > 0 && !seg.startsWith(".")),
    "must be a path inside the batch folder (no empty or dot-leading segments)",
  )
  .refine((s) => s !== MANIFEST_NAME && s !== SUMMARY_NAME, "must not name the manifest or the summary");

/** Item members as in CheckRequest, except that `file` names a file of the batch and URLs and references are not taken. */
const ManifestItem = CheckItemInput.omit({ file: true, references: true }).extend({ file: ManifestFile });

export const ManifestSchema = z.strictObject({
  items: z.array(ManifestItem).min(1, "must hold at least one item").max(MAX_ITEMS, `must hold at most ${MAX_ITEMS} items`),
  policy: z.string().regex(ID_PATTERN).optional(),
  job_id: z
    .string()
    .regex(ID_PATTERN)
    .refine((s) => s !== "." && s !== "..")
    .optional(),
  metadata: Metadata.optional(),
  /** Members every item takes unless it sets its own. */
  defaults: ManifestItem.omit({ file: true, metadata: true, file_name: true }).partial().optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestItemValue = z.infer<typeof ManifestItem>;

/** Parses a manifest; the problem names the field (`items[2].subject_reference`) or the JSON itself. */
export function parseManifest(text: string): { manifest: Manifest } | { field: string; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { field: "manifest.json", message: `is not valid JSON (${(err as Error).message})` };
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field =
      issue.path
        .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
        .join("")
        .replace(/^\./, "") || "manifest.json";
    return { field, message: issue.message };
  }
  const m = parsed.data;
  for (const [i, it] of m.items.entries()) {
    const subject = it.subject_reference ?? m.defaults?.subject_reference;
    if (!subject) return { field: `items[${i}].subject_reference`, message: "is required (in the item or in defaults)" };
  }
  return { manifest: m };
}

/** The items of a manifest with its defaults applied. */
export function manifestItems(m: Manifest): ManifestItemValue[] {
  return m.items.map((it) => ({ ...(m.defaults ?? {}), ...it }));
}
