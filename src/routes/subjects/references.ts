import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import type { AppEnv } from "../../http/context";
import { defineRoute, problems } from "../../http/route";
import { ProblemError, fieldName, invalidField, notFound } from "../../http/problem";
import { mediaType, readMultipart, unsupportedMediaType } from "../../http/multipart";
import {
  DEFAULT_REFERENCE_SOURCE,
  MAX_REFERENCE_BYTES,
  MAX_REFERENCE_FILES,
  REFERENCE_SOURCES,
  isReferenceSource,
  refIdProblem,
  type ReferenceSource,
} from "../../domain/enrolment";
import type { Upload } from "../../services/enrolment";
import { services } from "../../http/services";
import { subjectsRepo } from "../../storage/subjects";
import { recordAudit } from "../../storage/audit";
import { ReferenceParams, ReferencesByUrl, ReferencesResult, SubjectParams } from "./schemas";
import type { Context } from "hono";
import { privatePng, privatePngResponse } from "../../http/private-image";

/**
 * The multipart form of PUT .../references in the document. patternProperties is JSON Schema (OpenAPI 3.1),
 * which the generator's metadata type, shared with 3.0, leaves out; the generator copies it as given.
 */
const REFERENCE_FORM_DOC = {
  description:
    `One file part per reference, named by its ref_id (1 to 128 of [A-Za-z0-9._-], not starting with '.' or 'learned-'): ` +
    `PNG, JPEG, TIFF or PDF; 1 to ${MAX_REFERENCE_FILES} files, ${MAX_REFERENCE_BYTES / 1024 / 1024} MB in total (else 413). ` +
    `Each may come with a text field \`source.<ref_id>\`: ${REFERENCE_SOURCES.join(", ")} (default ${DEFAULT_REFERENCE_SOURCE}). ` +
    "A file part is a reference whatever its name (a file part `source.x` is the reference `source.x`); a text field must be " +
    "the source of a file part of the request, else 400 naming it.",
  minProperties: 1,
  patternProperties: {
    "^source\\.": {
      anyOf: [
        {
          title: "Source field",
          type: "string",
          enum: [...REFERENCE_SOURCES],
          description: "A text field: the source of the reference named after `source.`",
        },
        { title: "Reference file", type: "string", format: "binary", description: "A file part: the reference of that ref_id" },
      ],
    },
  },
  additionalProperties: {
    type: "string",
    format: "binary",
    description: "A file part: the reference named by the part's name (its ref_id)",
  },
} as Record<string, unknown> as { description: string };

const putReferences = defineRoute(
  { permission: "sig:references:write", idempotency: "none" },
  {
    method: "put",
    path: "/sig/subjects/{subject_reference}/references",
    tags: ["subjects"],
    summary: "Enrol reference signatures (creates the subject if new)",
    description:
      "Multipart: one file part per reference, named by its ref_id (PNG, JPEG, TIFF or PDF; at most 20 files, 20 MB in total), " +
      "each with an optional text field `source.<ref_id>`. JSON: ReferencesByUrl. An upload replaces the reference with the same ref_id. " +
      "Up to 3 references are enrolled within the request (200); more are queued (202). A rejected upload never replaces a live reference. " +
      "Idempotent: no Idempotency-Key.",
    request: {
      params: SubjectParams,
      body: {
        // Not "required": each media type's validator then runs only for its own Content-Type.
        required: false,
        content: {
          "multipart/form-data": {
            // Parts are named by the caller's ref_ids, so the form is a map: uploadsFromMultipart validates it.
            schema: z.object({}).catchall(z.any()).openapi(REFERENCE_FORM_DOC),
          },
          "application/json": { schema: ReferencesByUrl },
        },
      },
    },
    responses: {
      200: { description: "All references handled within the request", content: { "application/json": { schema: ReferencesResult } } },
      202: { description: "Some references queued for enrolment", content: { "application/json": { schema: ReferencesResult } } },
      ...problems(400, 401, 403, 413, 415, 421, 422, 429, 502, 503, 504),
    },
  },
);

const deleteRef = defineRoute(
  { permission: "sig:references:delete" },
  {
    method: "delete",
    path: "/sig/subjects/{subject_reference}/references/{ref_id}",
    tags: ["subjects"],
    summary: "Hard-delete a reference and its file",
    description:
      "A learned reference answers 409 conflict: remove it with POST .../references/unlearn. `ref_id` `unlearn` names the reference whose id is `unlearn`.",
    request: { params: ReferenceParams },
    responses: { 204: { description: "Deleted" }, ...problems(400, 401, 403, 404, 409, 421, 429) },
  },
);

// The spec lists this path on its own: a reference may be named `unlearn`, and this path's POST is the
// unlearn route, so the DELETE is stated here rather than left to the {ref_id} pattern.
const deleteUnlearnRef = defineRoute(
  { permission: "sig:references:delete" },
  {
    method: "delete",
    path: "/sig/subjects/{subject_reference}/references/unlearn",
    tags: ["subjects"],
    summary: "Hard-delete the reference whose ref_id is `unlearn`",
    description:
      "The same as DELETE .../references/{ref_id} with ref_id `unlearn` (POST on this path unlearns learned references instead).",
    request: { params: SubjectParams },
    responses: { 204: { description: "Deleted" }, ...problems(400, 401, 403, 404, 421, 429) },
  },
);

const referenceImage = defineRoute(
  { permission: "sig:subjects:read", rate: "image" },
  {
    method: "get",
    path: "/sig/subjects/{subject_reference}/references/{ref_id}/image",
    tags: ["subjects"],
    summary: "Grey PNG of the stored reference's first page (at most 512 px on the long side)",
    request: { params: ReferenceParams },
    responses: {
      200: privatePngResponse("The image"),
      ...problems(401, 403, 404, 421, 429, 503),
    },
  },
);

function sourceField(form: FormData, refId: string): ReferenceSource {
  // Only a text part is a source field: a file part of the same name is the reference of that ref_id.
  const raw = form.getAll(`source.${refId}`).find((v) => typeof v === "string");
  if (raw === undefined) return DEFAULT_REFERENCE_SOURCE;
  if (!isReferenceSource(raw)) {
    throw invalidField(fieldName("body", `source.${refId}`), "must be signature_card, confirmed_past or unverified");
  }
  return raw;
}

/** Reads and validates a multipart enrolment body into uploads, enforcing the file-count and size limits. */
async function uploadsFromMultipart(c: Context<AppEnv>): Promise<Upload[]> {
  const form = await readMultipart(c);
  const uploads: Upload[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const [name, entry] of form.entries()) {
    const value = entry as unknown as File | string;
    // A file part is a reference whatever its name (`source.card` is a legal ref_id); a text part can only
    // be the source field of the reference it names.
    if (typeof value === "string") {
      if (name.startsWith("source.")) continue;
      throw invalidField(fieldName("body", name), "must be a file part named by its ref_id (or a source.<ref_id> text field)");
    }
    const problem = refIdProblem(name);
    if (problem) throw invalidField(fieldName("body", name), `ref_id ${problem}`);
    if (seen.has(name)) throw invalidField(fieldName("body", name), "appears more than once");
    seen.add(name);
    if (seen.size > MAX_REFERENCE_FILES) {
      throw new ProblemError("too_large", `At most ${MAX_REFERENCE_FILES} reference files per request.`);
    }
    total += value.size;
    if (total > MAX_REFERENCE_BYTES) {
      throw new ProblemError("too_large", `The reference files exceed ${MAX_REFERENCE_BYTES / 1024 / 1024} MB in total.`);
    }
    uploads.push({
      refId: name,
      source: "unverified",
      bytes: new Uint8Array(await value.arrayBuffer()),
      contentType: value.type,
      method: "upload",
    });
  }
  for (const [name, value] of form.entries()) {
    if (typeof value === "string" && name.startsWith("source.") && !seen.has(name.slice("source.".length))) {
      throw invalidField(fieldName("body", name), "names no file part of this request");
    }
  }
  if (uploads.length === 0) throw invalidField("body", "holds no reference file");
  for (const u of uploads) u.source = sourceField(form, u.refId);
  return uploads;
}

/** Validates a ReferencesByUrl body and fetches every URL under one shared deadline. */
async function uploadsFromUrls(c: Context<AppEnv>, body: z.infer<typeof ReferencesByUrl>): Promise<Upload[]> {
  const seen = new Set<string>();
  body.references.forEach((r, i) => {
    const problem = refIdProblem(r.ref_id);
    if (problem) throw invalidField(fieldName("body", "references", i, "ref_id"), problem);
    if (seen.has(r.ref_id)) throw invalidField(fieldName("body", "references", i, "ref_id"), "appears more than once");
    seen.add(r.ref_id);
  });
  return services(c).references.fetchUploads(body.references);
}

export function registerReferenceRoutes(app: App): void {
  app.openapi(putReferences, async (c) => {
    const { subject_reference: subjectReference } = c.req.valid("param");
    const type = mediaType(c);
    let uploads: Upload[];
    if (type === "multipart/form-data") uploads = await uploadsFromMultipart(c);
    else if (type === "application/json") uploads = await uploadsFromUrls(c, c.req.valid("json") as z.infer<typeof ReferencesByUrl>);
    else throw unsupportedMediaType(["multipart/form-data", "application/json"]);

    const { outcomes, queued, forgeability } = await services(c).references.enrol(subjectReference, uploads);
    const counts = { enrolled: 0, rejected: 0, queued: 0 };
    for (const o of outcomes) counts[o.status]++;
    const body = {
      subject_reference: subjectReference,
      references: outcomes,
      counts,
      forgeability,
      subject_url: new URL(`/sig/subjects/${subjectReference}`, c.req.url).toString(),
    };
    return c.json(body, queued > 0 ? 202 : 200);
  });

  app.openapi(deleteUnlearnRef, (c) => deleteReference(c, c.req.valid("param").subject_reference, "unlearn"));
  app.openapi(deleteRef, (c) => {
    const { subject_reference: subjectReference, ref_id: refId } = c.req.valid("param");
    return deleteReference(c, subjectReference, refId);
  });

  app.openapi(referenceImage, async (c) => {
    const { subject_reference: subjectReference, ref_id: refId } = c.req.valid("param");
    const tenant = c.get("tenant");
    const row = await subjectsRepo(tenant.store.db).reference(tenant.org.id, subjectReference, refId);
    if (!row) throw notFound("reference");
    const object = await tenant.store.files.get(row.fileKey);
    if (!object) throw new ProblemError("not_found", "The reference's file no longer exists.");
    const png = await services(c).engine.thumbnail(new Uint8Array(await object.arrayBuffer()), 512);
    return privatePng(png);
  });
}

async function deleteReference(c: Context<AppEnv>, subjectReference: string, refId: string): Promise<Response> {
  const tenant = c.get("tenant");
  const result = await services(c).references.remove(subjectReference, refId);
  if (result === "not_found") throw notFound("reference");
  if (result === "learned") {
    throw new ProblemError(
      "conflict",
      `${refId} is a learned reference: remove it with POST /sig/subjects/${subjectReference}/references/unlearn.`,
      {
        extensions: { unlearn_url: new URL(`/sig/subjects/${subjectReference}/references/unlearn`, c.req.url).toString() },
      },
    );
  }
  const caller = c.get("caller");
  await recordAudit(tenant.store.db, {
    orgId: tenant.org.id,
    actor: caller.actor,
    action: "reference.delete",
    target: `${subjectReference}/${refId}`,
    requestId: c.get("requestId"),
  });
  return c.body(null, 204);
}
