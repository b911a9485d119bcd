/**
 * The streamed check's events (spec 6.1) for the OpenAPI document. The spec shows `received`, `comparing`,
 * `decision` and `error`; the `quality` and `located` payloads are designed here and state what
 * create.ts sends (the engine's CheckProgress, services/engine.ts).
 */
import { z } from "@hono/zod-openapi";
import { CUE_TEXT } from "../../domain/live";
import { ProblemSchema } from "../../http/schemas";
import { CheckResultSchema, CutOff } from "./schemas";

const Box = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });
const CUES = Object.keys(CUE_TEXT) as [keyof typeof CUE_TEXT, ...(keyof typeof CUE_TEXT)[]];

export const CheckStreamReceived = z
  .object({
    job_id: z.string().openapi({ description: "The check's job: read it with GET /sig/checks/{job_id} if the stream breaks off" }),
  })
  .openapi("CheckStreamReceived", { description: "`received`, always first: the check was accepted and its job created." });

export const QualityFigures = z
  .object({
    laplacian_variance: z.number().openapi({ description: "Variance of the Laplacian on the working copy (grey levels squared)" }),
    blur_px: z.number().openapi({ description: "Estimated blur (Gaussian sigma) in pixels of the working copy" }),
    exposure: z.number().openapi({ description: "Mean luminance, 0 (black) to 1 (white)" }),
    paper_level: z.number().openapi({ description: "Paper level (98th percentile of luminance), 0 to 1" }),
    ink_level: z.number().openapi({ description: "Ink level (0.3th percentile of luminance), 0 to 1" }),
    contrast: z.number().openapi({ description: "RMS contrast (standard deviation of luminance), 0 to 1" }),
    resolution_dpi: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Estimated resolution of the source in dots per inch; null when it cannot be told" }),
    ink_share: z.number().openapi({ description: "Share of ink pixels in the analysed area, 0 to 1" }),
    sharpness_score: z.number().openapi({ description: "Component score the overall score is built from, 0 to 1" }),
    exposure_score: z.number().openapi({ description: "Component score the overall score is built from, 0 to 1" }),
    contrast_score: z.number().openapi({ description: "Component score the overall score is built from, 0 to 1" }),
    resolution_score: z.number().openapi({ description: "Component score the overall score is built from, 0 to 1" }),
  })
  .openapi("QualityFigures", {
    description:
      "Designed here. The measures an image's quality score is built from, taken on a working copy at most 640 px on its long side; " +
      "figures in source pixels (dpi) are reported for the real page. Figures may be added.",
  });

export const CheckStreamQuality = z
  .object({
    page: z.number().int().min(1).openapi({
      description:
        "The 1-based page assessed: the first page searched (target.page when given; with a template, its first page with boxes)",
    }),
    score: z.number().min(0).max(1).openapi({
      description: "Image quality in [0, 1]. Below the policy's quality_floor the decision is UNREADABLE: `decision` follows at once",
    }),
    cue: z.enum(CUES).openapi({
      description: "The capture cue that matters most, as in live capture (an open enum: ignore unknown values)",
    }),
    figures: QualityFigures,
  })
  .openapi("CheckStreamQuality", {
    description: "Designed here. `quality`: the image quality of the first page searched (decoded downscaled), with a capture cue.",
  });

export const CheckStreamLocated = z
  .object({
    signatures: z
      .array(
        z.object({
          index: z
            .number()
            .int()
            .min(0)
            .openapi({ description: "The signature's index, as in the decision's `signatures` and the crop route's `signature`" }),
          page: z.number().int().min(1).openapi({ description: "1-based page" }),
          box: Box.openapi({ description: "In page pixels, origin top-left" }),
          confidence: z
            .number()
            .min(0)
            .max(1)
            .openapi({ description: "How sure the locator is that the box holds a signature, to 4 decimals" }),
          cut_off: CutOff,
        }),
      )
      .openapi({ description: "Every signature found on the pages searched; empty when none was (the decision is then NO_SIGNATURE)" }),
  })
  .openapi("CheckStreamLocated", {
    description:
      "Designed here. `located`: the signature regions found, as the decision's `signatures` will list them. " +
      "Where a name was found as separate words on one line, the words are listed as one signature when, compared with the " +
      "subject's references, their union scores above each word alone; and where nothing was found on a one-page image, its whole " +
      "ink is listed when it scores at least `flag` against them.",
  });

export const CheckStreamComparing = z
  .object({
    reference_count: z.number().int().min(1).openapi({ description: "The subject's references the signatures are compared with" }),
  })
  .openapi("CheckStreamComparing", {
    description:
      "`comparing`: the located signatures are compared with the subject's references; the decision follows. Where words were " +
      "joined or a page's whole ink looked at, those comparisons come before `located`.",
  });

const record = <E extends string, S extends z.ZodType>(event: E, data: S, description: string) =>
  z
    .object({
      event: z.literal(event).openapi({ description: "The record's `event:` line" }),
      // Bare: describing it here would rewrite the named component's own description.
      data,
    })
    .openapi({ description: `${description}. \`data\` is the record's \`data:\` line, parsed as JSON.` });

/**
 * One record of the stream, parsed: what a client's event parser yields. The order and framing are in the
 * 200 response's `text/event-stream` description.
 */
export const CheckStreamEvent = z
  .discriminatedUnion("event", [
    record("received", CheckStreamReceived, "First: the job was created"),
    record("quality", CheckStreamQuality, "When the item is compared: the first page's image quality"),
    record("located", CheckStreamLocated, "After quality, unless the page was below the quality floor"),
    record("comparing", CheckStreamComparing, "After located, when a readable signature was found"),
    record("decision", CheckResultSchema, "Last: the full CheckResult, as GET /sig/checks/{job_id} returns it"),
    record(
      "error",
      ProblemSchema,
      "Last, instead of decision: a problem document with job_id and status_url; the job goes on asynchronously (busy, timeout, a failed stream)",
    ),
  ])
  .openapi("CheckStreamEvent", {
    description:
      "One record of a streamed check (POST /sig/checks with `Accept: text/event-stream`), its `data:` line parsed: " +
      "`event` tells which member `data` is.",
  });

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The `text/event-stream` body of POST /sig/checks's 200. OpenAPI 3.1 has no schema for a stream of records. */
export const CHECK_STREAM_MEDIA = {
  schema: {
    type: "string" as const,
    description:
      "Server-Sent Events (UTF-8 text). Each record is an `event: <name>` line and a `data: <JSON>` line, then a blank line. " +
      "In order: `received`; then, when the item is compared, `quality`, `located` (unless the first page is below the quality floor) " +
      "and `comparing` (when a readable signature was found); finally exactly one of `decision` or `error`, after which the stream closes. " +
      "A comment line `: keep-alive` is sent every 10 s; ignore it. " +
      "`x-events` maps each event name to the schema of its data; CheckStreamEvent describes one parsed record. " +
      "An item that fails before it is compared (too few references, a file that cannot be read) goes from `received` straight to a " +
      "`decision` whose `errors` say why. An `error` record's `status` is the status the request would have had (503 busy, 504 timeout, 500); " +
      "its job goes on: read the outcome with GET /sig/checks/{job_id}, as after a stream that breaks off.",
    "x-events": {
      received: ref("CheckStreamReceived"),
      quality: ref("CheckStreamQuality"),
      located: ref("CheckStreamLocated"),
      comparing: ref("CheckStreamComparing"),
      decision: ref("CheckResult"),
      error: ref("Problem"),
    },
  },
};
