import { z } from "@hono/zod-openapi";
import { ID_PATTERN } from "../domain/ids";
import { PROBLEM_CODES } from "./problem";

export const Identifier = z
  .string()
  .regex(ID_PATTERN, "must be 1 to 128 characters of [A-Za-z0-9._-]")
  .refine((s) => s !== "." && s !== "..", "must not be '.' or '..'");

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
