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
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(Object.keys(PROBLEM_CODES) as [keyof typeof PROBLEM_CODES, ...(keyof typeof PROBLEM_CODES)[]]),
    request_id: z.string().optional(),
    job_id: z.string().optional(),
    status_url: z.string().optional(),
    region: z.string().optional(),
    api_host: z.string().optional(),
    reason: z.string().optional(),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .openapi("Problem");
