/**
 * Reading a check request's body into a CheckRequest and its documents: multipart (a JSON part
 * `request` plus file parts named by the items, and any {url} inputs) or JSON (URL inputs only). Each
 * distinct URL is fetched once, all of a request's under one shared deadline, whichever body named
 * it. Every document is inspected before anything is stored.
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../http/context";
import { ProblemError, fieldName, invalidField } from "../../http/problem";
import { mediaType, readJsonPart, readMultipart, refuseRepeatedParts, unsupportedMediaType } from "../../http/multipart";
import { fetchDocument, newFetchBudget } from "../../fetch/url-fetch";
import { urlPolicyOf } from "../../services/url-policy";
import { configOf } from "../../config";
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
import { unreadableInput } from "../../http/verify-problem";
import { DecodeBudget, type BudgetOverrun } from "../../domain/decode-budget";
import type { VerificationEngine } from "../../services/engine";
import type { PreparedInput, PreparedItem } from "../../services/checks";

export interface ParsedRequest {
  request: CheckRequest;
  items: NormalisedItem[];
  /** Documents by source, to be inspected. */
  load: (src: InputSource, field: string) => Promise<PreparedInput>;
  multipart: boolean;
}

/**
 * Where the CheckRequest sits in the body, as problems name its members: the JSON body itself, or the
 * multipart body's `request` part.
 */
export function requestField(multipart: boolean, ...path: readonly PropertyKey[]): string {
  return multipart ? fieldName("body", "request", ...path) : fieldName("body", ...path);
}

function zodProblem(multipart: boolean, error: z.ZodError): ProblemError {
  const issue = error.issues[0];
  return invalidField(requestField(multipart, ...issue.path), issue.message);
}

/** Parses the body of POST /sig/checks. */
export async function parseCheckBody(c: Context<AppEnv>, validJson: () => unknown): Promise<ParsedRequest> {
  const type = mediaType(c);
  if (type === "multipart/form-data") {
    const form = await readMultipart(c);
    refuseRepeatedParts(form);
    const json = await readJsonPart(form, "request");
    if (json === null) throw invalidField(requestField(true), "the multipart body needs a JSON part named request (CheckRequest)");
    const parsed = CheckRequestSchema.safeParse(json);
    if (!parsed.success) throw zodProblem(true, parsed.error);
    const normal = normaliseRequest(parsed.data, true);
    if ("problem" in normal) throw invalidField(requestField(true, ...normal.problem.path), normal.problem.message);
    const used = new Set(partNames(normal.items));
    for (const [name, value] of form.entries()) {
      if (name === "request") continue;
      if (typeof value === "string") throw invalidField(fieldName("body", name), "must be a file part");
      if (!used.has(name)) throw invalidField(fieldName("body", name), "is a file part that no item names");
    }
    for (const name of used) {
      if (!((form.get(name) as unknown) instanceof File))
        throw invalidField(requestField(true, "items"), `name the file part ${JSON.stringify(name)}, which the body does not hold`);
    }
    // One promise per part, taken before the first await: items load concurrently, and a part named by
    // many items and references must still be read (and later decoded) once, not once per name.
    const cache = new Map<string, Promise<PreparedInput>>();
    const fetchUrl = urlLoader(c);
    return {
      request: parsed.data,
      items: normal.items,
      multipart: true,
      load: (src, field) => {
        if (!("part" in src)) return fetchUrl(src, field);
        let got = cache.get(src.part);
        if (!got) {
          const file = form.get(src.part) as unknown as File;
          if (file.size > MAX_DOCUMENT_BYTES)
            throw new ProblemError("too_large", `${fieldName("body", src.part)}: the document exceeds ${MAX_DOCUMENT_BYTES} bytes.`);
          got = file.arrayBuffer().then((buf) => ({
            bytes: new Uint8Array(buf),
            contentType: file.type || null,
            fileName: defaultFileName(src, file.name || null),
          }));
          cache.set(src.part, got);
        }
        return got;
      },
    };
  }
  if (type === "application/json") {
    const parsed = CheckRequestSchema.safeParse(validJson());
    if (!parsed.success) throw zodProblem(false, parsed.error);
    const normal = normaliseRequest(parsed.data, false);
    if ("problem" in normal) throw invalidField(requestField(false, ...normal.problem.path), normal.problem.message);
    const fetchUrl = urlLoader(c);
    return {
      request: parsed.data,
      items: normal.items,
      multipart: false,
      load: (src, field) => {
        if (!("url" in src)) throw new Error("a JSON request holds only URL inputs");
        return fetchUrl(src, field);
      },
    };
  }
  throw unsupportedMediaType(["multipart/form-data", "application/json"]);
}

/**
 * The URL inputs of one request, in either body: each distinct URL fetched once from the tenant's
 * allowlist, every fetch under the request's one shared deadline.
 */
function urlLoader(c: Context<AppEnv>): (src: { url: string }, field: string) => Promise<PreparedInput> {
  const policy = urlPolicyOf(c.get("tenant").org, c.env);
  const { deadlineMs, stallWindowMs } = configOf(c.env).urlFetch;
  const budget = newFetchBudget({ maxBytes: MAX_DOCUMENT_BYTES, deadlineMs, stallWindowMs });
  const fetches = new Map<string, Promise<PreparedInput>>();
  return (src, field) => {
    let got = fetches.get(src.url);
    if (!got) {
      got = fetchDocument(src.url, field, policy, budget).then((f) => ({
        bytes: f.bytes,
        contentType: f.contentType,
        fileName: defaultFileName(src, null),
      }));
      got.catch(() => undefined);
      fetches.set(src.url, got);
    }
    return got;
  };
}

/**
 * Loads every document (all URL fetches at once, under the shared deadline) and inspects each distinct
 * one once, however many items and references name it (load returns one object per part or URL). The
 * pixels this request makes the service decode, at the request and in its checks, are charged to a
 * DecodeBudget: past it the request is refused with 413 before any more is decoded.
 */
export async function prepareItems(
  engine: VerificationEngine,
  parsed: ParsedRequest,
  budget = new DecodeBudget(),
): Promise<PreparedItem[]> {
  // The member that named the input: `.url` for a URL input, and under `request` in a multipart body.
  const named = (src: InputSource, ...at: (string | number)[]) => requestField(parsed.multipart, ...at, ...("url" in src ? ["url"] : []));
  const fileField = (i: number) => named(parsed.items[i].file, "items", i, "file");
  const refField = (i: number, n: number) => named(parsed.items[i].references[n], "items", i, "references", n);
  const loads = parsed.items.map((it, i) => ({
    input: parsed.load(it.file, fileField(i)),
    refs: it.references.map((r, n) => parsed.load(r, refField(i, n))),
  }));
  await Promise.all(loads.flatMap((l) => [l.input, ...l.refs]));

  const inspected = new Map<PreparedInput, Inspection>();
  const charge = (pixels: number) => {
    const over = budget.charge(pixels);
    if (over) throw decodeBudgetProblem(over, requestField(parsed.multipart, "items"));
  };
  // Each distinct document is decoded here once (charged once); each use of it by an item is charged
  // as the decode its check will make.
  const use = async (doc: PreparedInput, field: string): Promise<Inspection> => {
    let got = inspected.get(doc);
    if (!got) {
      got = await inspect(engine, doc.bytes, field);
      inspected.set(doc, got);
      charge(got.pixels);
    }
    charge(got.pixels);
    return got;
  };

  const prepared: PreparedItem[] = [];
  for (const [i, it] of parsed.items.entries()) {
    const input = await loads[i].input;
    const { pages } = await use(input, fileField(i));
    const references: PreparedInput[] = [];
    for (const [n, r] of loads[i].refs.entries()) {
      const ref = await r;
      await use(ref, refField(i, n));
      references.push(ref);
    }
    prepared.push({ item: it, input, pages, references });
  }
  return prepared;
}

interface Inspection {
  pages: number;
  /** Pixels of the first page. */
  pixels: number;
}

function decodeBudgetProblem(over: BudgetOverrun, field: string): ProblemError {
  const message = `the request would make the service decode about ${over.megapixels} megapixels; at most ${over.limitMegapixels} are decoded per request`;
  return new ProblemError(
    "too_large",
    `${field}: ${message} (the first page of each distinct document once, plus each item's document and references once per item). Send fewer items per request, or smaller images.`,
    { extensions: { limit: "decoded_megapixels", limit_megapixels: over.limitMegapixels, errors: [{ field, message }] } },
  );
}

/** A document's page count and first-page pixels; 415 for a format we do not take, 413 too large, else 422 unreadable. */
async function inspect(engine: VerificationEngine, bytes: Uint8Array, field: string): Promise<Inspection> {
  try {
    const { pages, pixels } = await engine.inspect(bytes);
    return { pages, pixels };
  } catch (err) {
    if (!isVerifyError(err)) throw err;
    throw unreadableInput(err, field, "document", "Documents");
  }
}
