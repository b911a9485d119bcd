/**
 * Form templates as an application service: creating one (the blank decoded once, the registration model
 * of every page that holds boxes computed once and stored in R2 beside the blank), reading, deleting,
 * and loading the stored model for a check.
 */
import { logError } from "../util/log";
import type { RegionStore, Org } from "../domain/tenancy";
import { ProblemError, fieldName } from "../http/problem";
import { newId } from "../domain/ids";
import { MAX_BLANK_BYTES, MAX_TEMPLATES, boxesInPixels, type TemplateBox, type TemplateCreate } from "../domain/template";
import { openDocument, sniffFormat } from "../verify/decode";
import { buildTemplate, type TemplateModel } from "../verify/template";
import { isVerifyError } from "../verify/types";
import { templateFileKeys, templatesRepo, type TemplateRecord } from "../storage/templates";

/** The multipart part holding the blank form, as problems name it. */
const BLANK = fieldName("body", "blank");

/** What is stored in R2 at a template's model key: one registration model per page that holds boxes. */
export interface StoredTemplateModel {
  version: 1;
  pages: { page: number; names: string[]; model: TemplateModel }[];
}

/** A template's model, ready for a check: per blank page, the model and the names of its boxes in order. */
export interface LoadedTemplate {
  templateId: string;
  models: Record<number, TemplateModel>;
  names: Record<number, string[]>;
}

export interface TemplateActor {
  actor: string;
  requestId?: string;
}

const MEDIA_TYPES = { png: "image/png", pdf: "application/pdf" } as const;

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** 415 unless the blank is a PNG or a PDF (by its bytes), 413 past 20 MB. */
export function checkBlank(bytes: Uint8Array): "image/png" | "application/pdf" {
  if (bytes.byteLength > MAX_BLANK_BYTES) throw new ProblemError("too_large", `${BLANK}: the file exceeds ${MAX_BLANK_BYTES} bytes.`);
  const format = sniffFormat(bytes);
  if (format !== "png" && format !== "pdf") {
    throw new ProblemError(
      "unsupported_media_type",
      `${BLANK}: the file is ${format ? `a ${format.toUpperCase()}` : "not a recognised document"}; a blank form must be PNG or PDF.`,
      {
        extensions: { errors: [{ field: BLANK, message: "must be PNG or PDF" }] },
      },
    );
  }
  return MEDIA_TYPES[format];
}

/**
 * Builds the registration models of a blank: for every page that holds boxes, the page decoded once
 * and the model built from it. Bad boxes and unreadable blanks are 400/422 naming the field.
 */
export async function buildTemplateModel(
  bytes: Uint8Array,
  input: TemplateCreate,
): Promise<{ boxes: TemplateBox[]; stored: StoredTemplateModel; pages: TemplateRecord["pages"] }> {
  let doc: Awaited<ReturnType<typeof openDocument>>;
  try {
    doc = await openDocument(bytes);
  } catch (err) {
    if (!isVerifyError(err)) throw err;
    throw unreadableBlank(err.code, err.message);
  }
  const pageNumbers = [...new Set(input.boxes.map((b) => b.page))].sort((a, b) => a - b);
  for (const p of pageNumbers) {
    if (p > doc.pageCount) {
      const i = input.boxes.findIndex((b) => b.page === p);
      const field = fieldName("body", "template", "boxes", i, "page");
      throw new ProblemError("invalid_request", `${field}: the blank has ${doc.pageCount} page(s).`, {
        extensions: { errors: [{ field, message: `must be at most ${doc.pageCount}` }] },
      });
    }
  }
  const rasters = new Map<number, Awaited<ReturnType<typeof doc.decodePage>>>();
  for (const p of pageNumbers) {
    try {
      rasters.set(p, await doc.decodePage(p - 1));
    } catch (err) {
      if (!isVerifyError(err)) throw err;
      throw unreadableBlank(err.code, `page ${p}: ${err.message}`);
    }
  }
  const boxes = boxesInPixels(input, (p) => rasters.get(p)!);
  const stored: StoredTemplateModel = { version: 1, pages: [] };
  for (const p of pageNumbers) {
    const onPage = boxes.map((b, i) => ({ b, i })).filter((x) => x.b.page === p);
    const raster = rasters.get(p)!;
    try {
      const model = buildTemplate(
        raster,
        onPage.map(({ b }) => ({ x: b.x, y: b.y, w: b.w, h: b.h })),
      );
      // buildTemplate clips boxes to the page: keep the stored boxes as the model sees them.
      onPage.forEach(({ i }, k) => {
        Object.assign(boxes[i], model.boxes[k]);
      });
      stored.pages.push({ page: p, names: onPage.map(({ b }) => b.name), model });
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      // "boxes[k] does not cover ..." counts boxes of this page: name the box of the request instead.
      const k = Number(/boxes\[(\d+)\]/.exec(err.message)?.[1] ?? 0);
      const i = onPage[k]?.i ?? 0;
      const field = fieldName("body", "template", "boxes", i);
      throw new ProblemError("invalid_request", `${field}: ${err.message.replace(/^boxes\[\d+\] /, "")}.`, {
        extensions: { errors: [{ field, message: "must cover at least 8x8 pixels of its page" }] },
      });
    }
  }
  const pages = pageNumbers.map((p) => ({ page: p, width: rasters.get(p)!.width, height: rasters.get(p)!.height }));
  return { boxes, stored, pages };
}

function unreadableBlank(code: string, message: string): ProblemError {
  if (code === "unsupported_format")
    return new ProblemError("unsupported_media_type", `${BLANK}: ${message}; a blank form must be PNG or PDF.`);
  if (code === "too_large" || code === "too_many_pixels" || code === "too_many_pages")
    return new ProblemError("too_large", `${BLANK}: ${message}.`);
  return new ProblemError("unprocessable", `${BLANK}: the blank form cannot be read (${code}: ${message}).`, {
    extensions: { reason: code, errors: [{ field: BLANK, message }] },
  });
}

/**
 * Creates a template: 409 when the id exists or the tenant has 200 templates, 503 when its files cannot
 * be stored. The files go first, under keys of their own upload, and are removed again if the row is
 * refused, so a refused creation leaves nothing behind and an existing template is never touched.
 */
export async function createTemplate(
  store: RegionStore,
  org: Pick<Org, "id">,
  input: TemplateCreate,
  blank: Uint8Array,
  who: TemplateActor,
): Promise<TemplateRecord> {
  const repo = templatesRepo(store.db);
  if ((await repo.get(org.id, input.template_id)) !== null) throw exists(input.template_id);
  if ((await repo.count(org.id)) >= MAX_TEMPLATES) throw full();
  const blankType = checkBlank(blank);
  const built = await buildTemplateModel(blank, input);

  const keys = templateFileKeys(org.id, input.template_id, newId("tpl"));
  try {
    await store.files.put(keys.blankKey, blank, { httpMetadata: { contentType: blankType } });
    await store.files.put(keys.modelKey, JSON.stringify(built.stored), { httpMetadata: { contentType: "application/json" } });
  } catch (err) {
    logError("template files could not be stored", err, { template_id: input.template_id });
    await store.files.delete([keys.blankKey, keys.modelKey]).catch(() => undefined);
    throw new ProblemError("unavailable", "The template's files could not be stored; nothing was kept. Retry the request.", {
      headers: { "Retry-After": "5" },
    });
  }
  const record: TemplateRecord = {
    orgId: org.id,
    templateId: input.template_id,
    name: input.name ?? null,
    description: input.description ?? null,
    boxes: built.boxes,
    blankKey: keys.blankKey,
    blankType,
    blankBytes: blank.byteLength,
    blankSha256: await sha256Hex(blank),
    pages: built.pages,
    modelKey: keys.modelKey,
    createdBy: who.actor,
    createdAt: new Date().toISOString(),
  };
  const outcome = await repo.insert(record, MAX_TEMPLATES, {
    orgId: org.id,
    actor: who.actor,
    action: "template.create",
    target: `template:${input.template_id}`,
    detail: { boxes: built.boxes.map((b) => b.name), blank_bytes: blank.byteLength },
    requestId: who.requestId,
  });
  if (outcome !== "created") {
    await store.files.delete([keys.blankKey, keys.modelKey]).catch(() => undefined);
    throw outcome === "exists" ? exists(input.template_id) : full();
  }
  return record;
}

function exists(id: string): ProblemError {
  return new ProblemError("conflict", `A template ${id} exists already; delete it first to replace it.`);
}

function full(): ProblemError {
  return new ProblemError("conflict", `The organisation has ${MAX_TEMPLATES} templates, the most it may have; delete one first.`);
}

/** Deletes a template, its blank and its model; null when there is none. */
export async function deleteTemplate(
  store: RegionStore,
  org: Pick<Org, "id">,
  templateId: string,
  who: TemplateActor,
): Promise<TemplateRecord | null> {
  const removed = await templatesRepo(store.db).delete(org.id, templateId, {
    orgId: org.id,
    actor: who.actor,
    action: "template.delete",
    target: `template:${templateId}`,
    requestId: who.requestId,
  });
  // Only this template's own files: a template created again under the same id has files of its own.
  if (removed) await store.files.delete([removed.blankKey, removed.modelKey]);
  return removed;
}

/**
 * The stored registration models of a template, for a check; null when the template is gone, or when
 * `version` (the model key recorded when the item was submitted) names another creation of it.
 */
export async function loadTemplate(
  store: RegionStore,
  orgId: string,
  templateId: string,
  version?: string | null,
): Promise<LoadedTemplate | null> {
  const record = await templatesRepo(store.db).get(orgId, templateId);
  if (!record) return null;
  if (version !== undefined && record.modelKey !== version) return null;
  const obj = await store.files.get(record.modelKey);
  if (!obj) return null;
  const stored = (await obj.json()) as StoredTemplateModel;
  const models: Record<number, TemplateModel> = {};
  const names: Record<number, string[]> = {};
  for (const p of stored.pages) {
    models[p.page] = p.model;
    names[p.page] = p.names;
  }
  return { templateId, models, names };
}
