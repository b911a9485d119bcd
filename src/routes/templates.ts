/**
 * Form templates (spec 4.6). TemplateCreate and the Template members beyond the id are designed here:
 * named signature boxes on pages of the blank, in pixels or fractions of the page.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { App } from "../app";
import type { AppEnv } from "../http/context";
import { ProblemError, fieldName, invalidField, notFound } from "../http/problem";
import { readMultipart, refuseRepeatedParts } from "../http/multipart";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import { Identifier } from "../http/schemas";
import { absoluteUrl } from "../http/location";
import {
  MAX_BLANK_BYTES,
  MAX_TEMPLATES,
  MAX_TEMPLATE_JSON_BYTES,
  TemplateCreateSchema,
  templateProblem,
  type TemplateCreate,
} from "../domain/template";
import { templatesRepo, type TemplateRecord } from "../storage/templates";
import { checkBlank, createTemplate, deleteTemplate } from "../services/templates";

/** Multipart framing around a 20 MB blank and a small JSON part. */
const MAX_TEMPLATE_BODY_BYTES = MAX_BLANK_BYTES + 1024 * 1024;

const TemplateCreateDoc = TemplateCreateSchema.openapi("TemplateCreate", {
  description:
    "Designed here. The signature boxes of the blank form, each named (the name comes back as `box_name` in check results) and on a " +
    "1-based page of the blank. Coordinates are pixels of the blank page as uploaded (`unit: px`, default; for a PDF, the page's embedded " +
    "image) or fractions of the page (`unit: fraction`). Registration data (the print's keypoints and the blank's ink around each box) is " +
    "computed once from the blank at creation and stored with the template.",
  example: {
    template_id: "loan-application-v3",
    name: "Loan application v3",
    boxes: [{ name: "borrower", page: 1, x: 110, y: 1450, w: 480, h: 160 }],
  },
});

const TemplateBoxDoc = z.object({
  name: z.string(),
  page: z.number().int().min(1),
  x: z.number().int(),
  y: z.number().int(),
  w: z.number().int(),
  h: z.number().int(),
});

const TemplateDoc = z
  .object({
    template_id: z.string(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    boxes: z.array(TemplateBoxDoc).openapi({ description: "In blank-page pixels (fractions converted; boxes clipped to the page)" }),
    blank: z.object({
      media_type: z.enum(["image/png", "application/pdf"]),
      bytes: z.number().int(),
      sha256: z.string(),
      pages: z.array(z.object({ page: z.number().int(), width: z.number().int(), height: z.number().int() })).openapi({
        description: "Size in pixels of each blank page that holds boxes",
      }),
    }),
    created_at: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Template", { description: "Designed here beyond template_id." });

const TemplateListDoc = z
  .object({ templates: z.array(TemplateDoc) })
  .openapi("TemplateList", { description: `Newest first; at most ${MAX_TEMPLATES}.` });

const IdParams = z.object({
  template_id: Identifier.openapi({ param: { name: "template_id", in: "path" }, example: "loan-application-v3" }),
});

function templateJson(t: TemplateRecord) {
  return {
    template_id: t.templateId,
    name: t.name,
    description: t.description,
    boxes: t.boxes,
    blank: { media_type: t.blankType as "image/png" | "application/pdf", bytes: t.blankBytes, sha256: t.blankSha256, pages: t.pages },
    created_at: t.createdAt,
  };
}

const list = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/sig/templates",
    tags: ["templates"],
    summary: "The tenant's form templates",
    responses: {
      200: { description: "Templates, newest first", content: { "application/json": { schema: TemplateListDoc } } },
      ...problems(...AUTH_PROBLEMS),
    },
  },
);

const get = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/sig/templates/{template_id}",
    tags: ["templates"],
    summary: "One form template",
    request: { params: IdParams },
    responses: {
      200: { description: "The template", content: { "application/json": { schema: TemplateDoc } } },
      ...problems(...AUTH_PROBLEMS, 404),
    },
  },
);

const create = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "post",
    path: "/sig/templates",
    tags: ["templates"],
    summary: "Create a form template from a blank form and its signature boxes",
    description:
      `multipart/form-data: a JSON part \`template\` (TemplateCreate; a text field, or a file part typed application/json) and a file part ` +
      `\`blank\` (PNG or PDF, at most ${MAX_BLANK_BYTES} bytes). 409 conflict when the template_id exists (delete it first) or the tenant ` +
      `has ${MAX_TEMPLATES} templates. Audited as template.create. A check item naming the template registers its document to the blank ` +
      "(shift, small rotation and scale, phone photos), subtracts the printed form and looks for signatures in the boxes.",
    "x-max-body": MAX_TEMPLATE_BODY_BYTES,
    request: {
      body: {
        required: true,
        content: {
          "multipart/form-data": {
            // Loose on purpose: the parts are read and checked by the handler, which names the part at fault.
            schema: z
              .object({
                template: z.any().optional().openapi({
                  type: "string",
                  description:
                    "TemplateCreate (#/components/schemas/TemplateCreate) as JSON: a text field, or a file part typed application/json",
                }),
                blank: z.any().optional().openapi({ type: "string", format: "binary", description: "The blank form, PNG or PDF" }),
              })
              .catchall(z.any()),
          },
        },
      },
    },
    responses: {
      201: {
        description: "Created",
        headers: z.object({ Location: z.string().openapi({ description: "The template's absolute URL" }) }),
        content: { "application/json": { schema: TemplateDoc } },
      },
      ...problems(...AUTH_PROBLEMS, 409, 413, 415, 422),
    },
  },
);

const remove = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "delete",
    path: "/sig/templates/{template_id}",
    tags: ["templates"],
    summary: "Delete a template and its files",
    description:
      "Audited as template.delete. Queued check items that name it end with the item error template_not_found, also once a template is created again under the id: an item runs only with the template it was submitted with.",
    request: { params: IdParams },
    responses: { 204: { description: "Deleted" }, ...problems(...AUTH_PROBLEMS, 404) },
  },
);

/**
 * The JSON part of a multipart body, sent as a text field or as a file part typed application/json. Unlike
 * the checks route's `request` part (readJsonPart in src/http/multipart.ts), a file part without a type is
 * read as JSON, and the part has its own size bound.
 */
async function jsonPart(form: FormData, name: string, maxBytes: number): Promise<unknown> {
  const raw = form.get(name) as unknown;
  if (raw === null) throw invalidField(fieldName("body", name), `the multipart body needs a JSON part named ${name}`);
  let text: string;
  if (typeof raw === "string") text = raw;
  else {
    const file = raw as File;
    const type = (file.type || "application/json").split(";")[0].trim().toLowerCase();
    if (type !== "application/json") throw invalidField(fieldName("body", name), "a file part must be typed application/json");
    if (file.size > maxBytes) throw new ProblemError("too_large", `${fieldName("body", name)}: the JSON part exceeds ${maxBytes} bytes.`);
    text = await file.text();
  }
  if (text.length > maxBytes) throw new ProblemError("too_large", `${fieldName("body", name)}: the JSON part exceeds ${maxBytes} bytes.`);
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField(fieldName("body", name), "is not valid JSON");
  }
}

async function readTemplateBody(c: Context<AppEnv>): Promise<{ input: TemplateCreate; blank: Uint8Array }> {
  const form = await readMultipart(c);
  refuseRepeatedParts(form);
  for (const name of form.keys()) {
    if (name !== "template" && name !== "blank")
      throw invalidField(fieldName("body", name), "is not a part of this body (send template and blank)");
  }
  const parsed = TemplateCreateSchema.safeParse(await jsonPart(form, "template", MAX_TEMPLATE_JSON_BYTES));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidField(fieldName("body", "template", ...issue.path), issue.message);
  }
  const problem = templateProblem(parsed.data);
  if (problem) throw invalidField(fieldName("body", "template", ...problem.path), problem.message);
  const blank = form.get("blank") as unknown;
  if (blank === null || typeof blank === "string")
    throw invalidField(fieldName("body", "blank"), "the multipart body needs a file part named blank (PNG or PDF)");
  const file = blank as File;
  if (file.size > MAX_BLANK_BYTES) throw new ProblemError("too_large", `blank: the file exceeds ${MAX_BLANK_BYTES} bytes.`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  checkBlank(bytes);
  return { input: parsed.data, blank: bytes };
}

export function registerTemplateRoutes(app: App): void {
  // The JSON part is validated by the handler (it may arrive as a text field or a file part), so the
  // schema is registered as a component of its own for the document.
  app.openAPIRegistry.register("TemplateCreate", TemplateCreateDoc);
  app.openapi(list, async (c) => {
    const { org, store } = c.get("tenant");
    const templates = await templatesRepo(store.db).list(org.id);
    return c.json({ templates: templates.map(templateJson) }, 200);
  });

  app.openapi(get, async (c) => {
    const { org, store } = c.get("tenant");
    const t = await templatesRepo(store.db).get(org.id, c.req.valid("param").template_id);
    if (!t) throw notFound("template");
    return c.json(templateJson(t), 200);
  });

  app.openapi(create, async (c) => {
    const { org, store } = c.get("tenant");
    const { input, blank } = await readTemplateBody(c);
    const t = await createTemplate(store, org, input, blank, { actor: c.get("caller").actor, requestId: c.get("requestId") });
    c.header("Location", absoluteUrl(c, `/sig/templates/${encodeURIComponent(t.templateId)}`));
    return c.json(templateJson(t), 201);
  });

  app.openapi(remove, async (c) => {
    const { org, store } = c.get("tenant");
    const removed = await deleteTemplate(store, org, c.req.valid("param").template_id, {
      actor: c.get("caller").actor,
      requestId: c.get("requestId"),
    });
    if (!removed) throw notFound("template");
    return c.body(null, 204);
  });
}
