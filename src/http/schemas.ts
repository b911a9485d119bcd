import { z } from "@hono/zod-openapi";
import { ID_PATTERN } from "../domain/ids";
import { PROBLEM_CODES } from "./problem";

export const Identifier = z
  .string()
  .regex(ID_PATTERN, "must be 1 to 128 characters of [A-Za-z0-9._-]")
  .refine((s) => s !== "." && s !== "..", "must not be '.' or '..'");

/**
 * An integer query parameter, documented as an integer. Only digits are taken: z.coerce.number turns
 * "" and " " into 0 (so `?signature=` chose signature 0) and takes "1e2" or "0x10"; here an empty or
 * non-decimal value is a 400 naming the parameter (an absent one takes the default).
 */
export function queryInteger(bounds: { min: number; max?: number }) {
  const message =
    bounds.max === undefined ? `must be an integer, ${bounds.min} or more` : `must be an integer from ${bounds.min} to ${bounds.max}`;
  const int = z.number({ error: message }).int(message).min(bounds.min, message);
  return z.preprocess(
    (v) => (typeof v === "string" && /^\d{1,9}$/.test(v) ? Number(v) : v),
    bounds.max === undefined ? int : int.max(bounds.max, message),
  );
}

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ description: "A URI naming the kind of problem: the documentation of its code" }),
    title: z.string().openapi({ description: "A short, fixed summary of the code" }),
    status: z.number().int().openapi({ description: "The HTTP status, repeated" }),
    detail: z.string().openapi({ description: "What is wrong with this request, in words" }),
    code: z
      .enum(Object.keys(PROBLEM_CODES) as [keyof typeof PROBLEM_CODES, ...(keyof typeof PROBLEM_CODES)[]])
      .openapi({ description: "The stable machine-readable code (spec part 7); branch on this, not on the title or detail" }),
    request_id: z.string().optional().openapi({ description: "The request's id, as in X-Request-Id" }),
    job_id: z.string().optional().openapi({ description: "503 busy, 504 timeout (and stream errors): the job, which continues" }),
    status_url: z.string().optional().openapi({ description: "With job_id: where to read the job" }),
    region: z.string().optional().openapi({ description: "421 wrong_region: the organisation's region" }),
    api_host: z.string().optional().openapi({ description: "421 wrong_region: the address to use instead" }),
    reason: z
      .string()
      .optional()
      .openapi({
        description:
          "Why a fetch or timeout failed: fetch_deadline (504), body_stalled, connection_failed, upstream_status, too_many_redirects, " +
          "invalid_redirect (fetch_failed); on other codes, a finer reason where one is useful",
      }),
    upstream_status: z
      .number()
      .int()
      .optional()
      .openapi({ description: "fetch_failed with reason upstream_status: the status the host answered" }),
    host: z.string().optional().openapi({ description: "fetch_failed with reason connection_failed: the host that could not be reached" }),
    permission: z.string().optional().openapi({ description: "403 permission_denied: the permission the route needs" }),
    limit: z.string().optional().openapi({ description: "413 too_large: which limit was exceeded (e.g. decoded_megapixels)" }),
    limit_megapixels: z.number().optional().openapi({ description: "413 with limit decoded_megapixels: the request's decoding budget" }),
    accepted: z.array(z.string()).optional().openapi({ description: "415: the media types the route accepts" }),
    errors: z
      .array(z.object({ field: z.string(), message: z.string() }))
      .optional()
      .openapi({
        description:
          "400, 413, 415 and 422: each offending member and what is wrong with it. `field` is `body.` then the member's dot-separated path, " +
          "array indices as numbers (body.items.0.file.url; a multipart part: body.blank, body.request.items.0.file), `query.` then a query " +
          "parameter (query.cursor), a header's name (Idempotency-Key), or `body` for the whole body",
      }),
  })
  .openapi("Problem", {
    description: "An RFC 9457 problem document (application/problem+json); unknown members may appear and are to be ignored",
  });
