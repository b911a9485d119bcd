/**
 * Test helper for checks: enrol a synthetic writer, build check bodies, post them and wait for jobs,
 * all through the Worker's fetch.
 */
import { expect } from "vitest";
import { api } from "./tenant";
import { referencesForm, signaturePng } from "./signatures";
import { until } from "./wait";

export interface CheckResultBody {
  check_id: string;
  job_id: string;
  item_index: number;
  decision: string | null;
  score: number | null;
  billable: boolean;
  subject_reference: string | null;
  reference: string | null;
  process: string | null;
  input_type: string | null;
  file_name: string | null;
  signatures: {
    index: number;
    page: number;
    box: { x: number; y: number; w: number; h: number };
    confidence: number;
    cut_off?: boolean;
    image_url: string;
  }[];
  best_match: { signature_index: number; ref_id: string; score: number } | null;
  regions: unknown[];
  quality: { score: number } | null;
  versions: { policy: string };
  metadata?: Record<string, unknown> | null;
  errors: { code: string; detail: string }[];
  image_url: string | null;
}

export interface JobBody {
  job_id: string;
  status: string;
  item_count: number;
  completed_items: number;
  results: CheckResultBody[];
  next_cursor: string | null;
  status_url: string;
}

/** Enrols `count` signatures of `writer` as the subject's references (200 expected). */
export async function enrolWriter(key: string, subject: string, writer: number, count = 3): Promise<void> {
  // At most 3 per request are enrolled within it.
  for (let from = 0; from < count; from += 3) {
    const files: Record<string, Uint8Array> = {};
    for (let i = from; i < Math.min(count, from + 3); i++) files[`r${i}`] = signaturePng(writer, i);
    const res = await api(`/sig/subjects/${subject}/references`, { method: "PUT", key, body: referencesForm(files) });
    expect(res.status, await res.clone().text()).toBe(200);
  }
}

/** A multipart check body: the JSON part `request` and one file part per entry of `files`. */
export function checkForm(request: unknown, files: Record<string, Uint8Array>): FormData {
  const form = new FormData();
  form.append("request", JSON.stringify(request));
  for (const [name, bytes] of Object.entries(files))
    form.append(name, new Blob([bytes], { type: "application/octet-stream" }), `${name}.png`);
  return form;
}

export function postCheck(
  key: string,
  body: FormData | object,
  opts: { idem?: string; accept?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  headers["Idempotency-Key"] = opts.idem ?? `k-${crypto.randomUUID()}`;
  if (opts.accept) headers.Accept = opts.accept;
  return body instanceof FormData
    ? api("/sig/checks", { method: "POST", key, body, headers })
    : api("/sig/checks", { method: "POST", key, json: body, headers });
}

/** Reads GET /sig/checks/{job_id} until the job has finished (completed, failed or rejected). */
export async function waitForJob(key: string, jobId: string, query = ""): Promise<JobBody> {
  return until(
    async () => {
      const res = await api(`/sig/checks/${jobId}${query}`, { key });
      expect(res.status).toBe(200);
      return (await res.json()) as JobBody;
    },
    (job) => ["completed", "failed", "rejected"].includes(job.status),
    { what: `job ${jobId} to finish`, tries: 200, pauseMs: 150 },
  );
}

export async function expectProblem(res: Response, status: number, code?: string): Promise<Record<string, any>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  const body = JSON.parse(text) as Record<string, any>;
  if (code) expect(body.code).toBe(code);
  return body;
}
