/**
 * TemplateCreate (the JSON part `template` of POST /sig/templates; not shown in the spec, designed
 * here) and the rules zod alone cannot state. Boxes are named, so a check can say in which box it found
 * a signature, and placed on a page of the blank, in blank-page pixels or as fractions of the page.
 */
import { z } from "zod";
import { ID_PATTERN } from "../domain/ids";

/** At most this many templates per tenant (spec part 8). */
export const MAX_TEMPLATES = 200;
/** The blank form file: at most 20 MB (spec part 8), read as MiB like every document limit. */
export const MAX_BLANK_BYTES = 20 * 1024 * 1024;
export const MAX_TEMPLATE_BOXES = 20;
/** The JSON part is small; a larger one is refused before it is parsed. */
export const MAX_TEMPLATE_JSON_BYTES = 64 * 1024;

const Identifier = z
  .string()
  .regex(ID_PATTERN, "must be 1 to 128 characters of [A-Za-z0-9._-]")
  .refine((s) => s !== "." && s !== "..", "must not be '.' or '..'");

export const TemplateBoxInput = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, "must be 1 to 64 characters of [A-Za-z0-9._-]")
    .describe("Names the box in check results"),
  page: z.number().int().min(1).max(50).default(1).describe("1-based page of the blank the box is on"),
  x: z.number().min(0),
  y: z.number().min(0),
  w: z.number().positive(),
  h: z.number().positive(),
});

export const TemplateCreateSchema = z.strictObject({
  template_id: Identifier.describe("The template's id (unique in the tenant; delete first to replace)"),
  name: z.string().min(1).max(200).optional().describe("A label for people"),
  description: z.string().max(2000).optional(),
  unit: z
    .enum(["px", "fraction"])
    .default("px")
    .describe(
      "`px`: box coordinates in pixels of the blank page as uploaded (a PDF page: its embedded image); `fraction`: 0..1 of the page's width and height",
    ),
  boxes: z
    .array(TemplateBoxInput)
    .min(1, "must hold at least one signature box")
    .max(MAX_TEMPLATE_BOXES, `must hold at most ${MAX_TEMPLATE_BOXES} boxes`)
    .describe("The signature boxes, each named and on a page of the blank"),
});
export type TemplateCreate = z.infer<typeof TemplateCreateSchema>;

/** A box as stored: in blank-page pixels, whole numbers. */
export interface TemplateBox {
  name: string;
  page: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface TemplateProblem {
  /** The member's path in the TemplateCreate, e.g. ["boxes", 0, "name"]. */
  path: (string | number)[];
  message: string;
}

/** Box names are unique, and fractions stay within the page. */
export function templateProblem(t: TemplateCreate): TemplateProblem | null {
  const seen = new Set<string>();
  for (const [i, b] of t.boxes.entries()) {
    if (seen.has(b.name)) return { path: ["boxes", i, "name"], message: `repeats the box name ${JSON.stringify(b.name)}` };
    seen.add(b.name);
    if (t.unit === "fraction" && (b.x + b.w > 1.0001 || b.y + b.h > 1.0001)) {
      return { path: ["boxes", i], message: "with unit fraction, x + w and y + h must be at most 1" };
    }
  }
  return null;
}

/** Boxes in pixels of their page, given each page's size. */
export function boxesInPixels(t: TemplateCreate, pageSize: (page: number) => { width: number; height: number }): TemplateBox[] {
  return t.boxes.map((b) => {
    if (t.unit === "px")
      return { name: b.name, page: b.page, x: Math.round(b.x), y: Math.round(b.y), w: Math.round(b.w), h: Math.round(b.h) };
    const { width, height } = pageSize(b.page);
    return {
      name: b.name,
      page: b.page,
      x: Math.round(b.x * width),
      y: Math.round(b.y * height),
      w: Math.round(b.w * width),
      h: Math.round(b.h * height),
    };
  });
}
