import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ProblemError, fieldName, invalidField } from "./problem";

/** The media type of the request body, lower-cased, without parameters ("" when absent). */
export function mediaType(c: Context): string {
  return (c.req.header("Content-Type") ?? "").split(";")[0].trim().toLowerCase();
}

/** 415 naming what the route takes. */
export function unsupportedMediaType(accepted: string[]): ProblemError {
  return new ProblemError("unsupported_media_type", `The body must be ${accepted.join(" or ")}.`, {
    extensions: { accepted },
  });
}

/** Parses a multipart/form-data body; a malformed one is a 400 naming the body, never a 500. */
export async function readMultipart(c: Context): Promise<FormData> {
  try {
    return await c.req.formData();
  } catch (err) {
    if (err instanceof ProblemError) throw err;
    throw invalidField("body", `is not valid multipart/form-data (${(err as Error).message})`);
  }
}

/**
 * 400 naming the first part name the body holds twice: a form keeps both, and a reader taking the first
 * (FormData.get) would silently ignore the other, so which file was checked would depend on order.
 */
export function refuseRepeatedParts(form: FormData): void {
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (seen.has(name)) throw invalidField(fieldName("body", name), "appears more than once");
    seen.add(name);
  }
}

/** Parses a JSON body; malformed JSON is a 400 naming the body. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField("body", "is not valid JSON");
  }
}

// ---- JSON parts of multipart bodies ---------------------------------------------------------------
// A JSON part (checks' `request`, templates' `template`) arrives either as a text field (FormData
// `append(name, string)`, `curl -F 'request={...}'`) or as a file part typed JSON (a FormData Blob,
// `curl -F 'request=@req.json;type=application/json'`). Both are the same part to us.

function isJsonType(type: string): boolean {
  return /^application\/([\w.-]+\+)?json$/.test(type.split(";")[0].trim().toLowerCase());
}

function isFile(value: unknown): value is File {
  return typeof value === "object" && value !== null && typeof (value as File).arrayBuffer === "function" && "size" in value;
}

/**
 * The route schema of a JSON part, for the multipart body of a route contract: a text field, or a file
 * part whose Content-Type is application/json (or a +json type). The part's JSON is validated by the
 * handler (readJsonPart), which names its members.
 */
export function jsonPart(description: string) {
  return z
    .custom<string | File>((v) => typeof v === "string" || (isFile(v) && isJsonType(v.type)), {
      message: "must be a text field or a file part with Content-Type application/json",
    })
    .openapi({ type: "string", description: `${description}. A text field, or a file part with Content-Type application/json.` });
}

/**
 * Reads the JSON part `name` of a multipart body, whether it came as a text field or as a file part
 * typed JSON: null when absent; 400 naming the part when it is another file type or not JSON.
 */
export async function readJsonPart(form: FormData, name: string): Promise<unknown | null> {
  const raw = form.get(name) as unknown;
  if (raw === null) return null;
  let text: string;
  if (typeof raw === "string") text = raw;
  else if (isFile(raw)) {
    if (!isJsonType(raw.type))
      throw invalidField(
        fieldName("body", name),
        `is a file part of type ${raw.type || "(none)"}; send it as a text field or with Content-Type application/json`,
      );
    text = await raw.text();
  } else throw invalidField(fieldName("body", name), "must be a text field or a JSON file part");
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField(fieldName("body", name), "is not valid JSON");
  }
}
