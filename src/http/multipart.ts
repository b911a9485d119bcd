import type { Context } from "hono";
import { ProblemError, invalidField } from "./problem";

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

/** Parses a JSON body; malformed JSON is a 400 naming the body. */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField("body", "is not valid JSON");
  }
}
