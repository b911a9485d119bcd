/**
 * Reading a check request's body into a CheckRequest and its documents: multipart (a JSON part
 * `request` plus file parts named by the items) or JSON (URL inputs only, each distinct URL fetched
 * once under one shared deadline). Every document is inspected before anything is stored.
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../http/context";
import { ProblemError, invalidField } from "../../http/problem";
import { mediaType, readJsonPart, readMultipart, unsupportedMediaType } from "../../http/multipart";
import { fetchDocument, newFetchBudget } from "../../fetch/url-fetch";
import { urlPolicyOf } from "../../services/url-policy";
import { checkSettings } from "../../services/check-capacity";
import {
  CheckRequestSchema,
  MAX_DOCUMENT_BYTES,
  defaultFileName,
  normaliseRequest,
  partNames,
  type CheckRequest,
  type InputSource,
  type NormalisedItem,
} from "../../domain/check-request";
import { isVerifyError } from "../../verify/types";
import type { VerificationEngine } from "../../services/engine";
import type { PreparedInput, PreparedItem } from "../../services/checks";

export interface ParsedRequest {
  request: CheckRequest;
  items: NormalisedItem[];
  /** Documents by source, to be inspected. */
  load: (src: InputSource, field: string) => Promise<PreparedInput>;
  multipart: boolean;
}

function zodProblem(prefix: string, error: z.ZodError): ProblemError {
  const issue = error.issues[0];
  const field = [prefix, ...issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))].join("").replace(/^\./, "");
  return invalidField(field.replace(/\.\[/g, "["), issue.message);
}

/** Parses the body of POST /sig/checks. */
export async function parseCheckBody(c: Context<AppEnv>, validJson: () => unknown): Promise<ParsedRequest> {
  const type = mediaType(c);
  if (type === "multipart/form-data") {
    const form = await readMultipart(c);
    const json = await readJsonPart(form, "request");
    if (json === null) throw invalidField("request", "the multipart body needs a JSON part named request (CheckRequest)");
    const parsed = CheckRequestSchema.safeParse(json);
    if (!parsed.success) throw zodProblem("request", parsed.error);
    const normal = normaliseRequest(parsed.data, true);
    if ("problem" in normal) throw invalidField(`request.${normal.problem.field}`, normal.problem.message);
    const used = new Set(partNames(normal.items));
    for (const [name, value] of form.entries()) {
      if (name === "request") continue;
      if (typeof value === "string") throw invalidField(name, "must be a file part");
      if (!used.has(name)) throw invalidField(name, "is a file part that no item names");
    }
    for (const name of used) {
      if (!((form.get(name) as unknown) instanceof File)) throw invalidField(`request.items`, `name the file part ${JSON.stringify(name)}, which the body does not hold`);
    }
    const cache = new Map<string, PreparedInput>();
    return {
      request: parsed.data,
      items: normal.items,
      multipart: true,
      load: async (src) => {
        if (!("part" in src)) throw new Error("a multipart request holds only part inputs here");
        let got = cache.get(src.part);
        if (!got) {
          const file = form.get(src.part) as unknown as File;
          if (file.size > MAX_DOCUMENT_BYTES) throw new ProblemError("too_large", `${src.part}: the document exceeds ${MAX_DOCUMENT_BYTES} bytes.`);
          got = { bytes: new Uint8Array(await file.arrayBuffer()), contentType: file.type || null, fileName: defaultFileName(src, file.name || null) };
          cache.set(src.part, got);
        }
        return got;
      },
    };
  }
  if (type === "application/json") {
    const parsed = CheckRequestSchema.safeParse(validJson());
    if (!parsed.success) throw zodProblem("body", parsed.error);
    const normal = normaliseRequest(parsed.data, false);
    if ("problem" in normal) throw invalidField(normal.problem.field, normal.problem.message);
    const policy = urlPolicyOf(c.get("tenant").org, c.env);
    const budget = newFetchBudget({ maxBytes: MAX_DOCUMENT_BYTES, deadlineMs: checkSettings(c.env).fetchDeadlineMs });
    const fetches = new Map<string, Promise<PreparedInput>>();
    return {
      request: parsed.data,
      items: normal.items,
      multipart: false,
      load: (src, field) => {
        if (!("url" in src)) throw new Error("a JSON request holds only URL inputs");
        let got = fetches.get(src.url);
        if (!got) {
          got = fetchDocument(src.url, field, policy, budget).then((f) => ({ bytes: f.bytes, contentType: f.contentType, fileName: defaultFileName(src, null) }));
          got.catch(() => undefined);
          fetches.set(src.url, got);
        }
        return got;
      },
    };
  }
  throw unsupportedMediaType(["multipart/form-data", "application/json"]);
}

/** Loads every document (all URL fetches at once, under the shared deadline) and inspects each. */
export async function prepareItems(engine: VerificationEngine, parsed: ParsedRequest): Promise<PreparedItem[]> {
  const fileField = (i: number) => (parsed.multipart ? `request.items[${i}].file` : `items[${i}].file.url`);
  const refField = (i: number, n: number) => (parsed.multipart ? `request.items[${i}].references[${n}]` : `items[${i}].references[${n}].url`);
  const loads = parsed.items.map((it) => ({
    input: parsed.load(it.file, fileField(it.index)),
    refs: it.references.map((r, n) => parsed.load(r, refField(it.index, n))),
  }));
  await Promise.all(loads.flatMap((l) => [l.input, ...l.refs]));

  const prepared: PreparedItem[] = [];
  for (const [i, it] of parsed.items.entries()) {
    const input = await loads[i].input;
    const pages = await inspect(engine, input.bytes, fileField(i));
    const references: PreparedInput[] = [];
    for (const [n, r] of loads[i].refs.entries()) {
      const ref = await r;
      await inspect(engine, ref.bytes, refField(i, n));
      references.push(ref);
    }
    prepared.push({ item: it, input, pages, references });
  }
  return prepared;
}

/** A document's page count; 415 for a format we do not take, 413 too large, else 422 unreadable. */
async function inspect(engine: VerificationEngine, bytes: Uint8Array, field: string): Promise<number> {
  try {
    return (await engine.inspect(bytes)).pages;
  } catch (err) {
    if (!isVerifyError(err)) throw err;
    const errors = [{ field, message: err.message }];
    if (err.code === "unsupported_format") {
      throw new ProblemError("unsupported_media_type", `${field}: ${err.message}. Documents must be PNG, JPEG, TIFF or PDF.`, { extensions: { errors } });
    }
    if (err.code === "too_large") throw new ProblemError("too_large", `${field}: ${err.message}.`, { extensions: { errors } });
    throw new ProblemError("unprocessable", `${field}: the document cannot be read (${err.code}: ${err.message}).`, {
      extensions: { reason: err.code, errors },
    });
  }
}
