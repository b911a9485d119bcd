/**
 * The closed error vocabulary. Every error the API returns is a ProblemError with one of these
 * codes, rendered once (see renderProblem) as application/problem+json (RFC 9457).
 */
export const PROBLEM_CODES = {
  invalid_request: { status: 400, title: "Invalid request" },
  invalid_version: { status: 400, title: "Invalid Service-Version" },
  invalid_cursor: { status: 400, title: "Invalid cursor" },
  unauthorized: { status: 401, title: "Unauthorized" },
  billing_required: { status: 402, title: "Billing required" },
  permission_denied: { status: 403, title: "Permission denied" },
  tenant_not_provisioned: { status: 403, title: "Tenant not provisioned" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  idempotency_conflict: { status: 409, title: "Idempotency key reused with a different body" },
  idempotency_in_progress: { status: 409, title: "Idempotency key in use" },
  idempotency_not_replayable: { status: 409, title: "Idempotency key not replayable" },
  conflict: { status: 409, title: "Conflict" },
  too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  wrong_region: { status: 421, title: "Wrong region" },
  unprocessable: { status: 422, title: "Unprocessable content" },
  rate_limited: { status: 429, title: "Rate limited" },
  quota_exceeded: { status: 429, title: "Quota exceeded" },
  internal_error: { status: 500, title: "Internal error" },
  not_implemented: { status: 501, title: "Not implemented" },
  fetch_failed: { status: 502, title: "Fetch failed" },
  busy: { status: 503, title: "Busy" },
  org_moving: { status: 503, title: "Organisation moving" },
  unavailable: { status: 503, title: "Unavailable" },
  timeout: { status: 504, title: "Timeout" },
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** Extension members allowed on a problem document (spec part 7, plus `errors` for field detail). */
export interface ProblemExtensions {
  job_id?: string;
  status_url?: string;
  region?: string;
  api_host?: string;
  reason?: string;
  /** Names the offending fields of a 400. */
  errors?: { field: string; message: string }[];
  [member: string]: unknown;
}

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly detail: string;
  readonly extensions: ProblemExtensions;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { extensions?: ProblemExtensions; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(detail);
    this.name = "ProblemError";
    this.code = code;
    // `timeout` is 408 for a slow request body and 504 for a slow item; everything else has one status.
    this.status = options.status ?? PROBLEM_CODES[code].status;
    this.detail = detail;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }
}

export function isProblemError(err: unknown): err is ProblemError {
  return err instanceof ProblemError;
}

/**
 * The one way a problem names a request member (`errors[].field`, and the start of `detail`): where it
 * is, then its path, dot-separated, array indices as numbers: `body.items.0.file.url`, `body.blank` (a
 * multipart part), `query.q`. A header is named by itself (`Idempotency-Key`), the whole body `body`.
 */
export function fieldName(location: "body" | "query", ...path: readonly PropertyKey[]): string {
  return [location, ...path.map(String)].join(".");
}

/** Shorthand for a 400 that names the offending field (named by fieldName, or a header's name). */
export function invalidField(field: string, message: string): ProblemError {
  return new ProblemError("invalid_request", `${field}: ${message}`, {
    extensions: { errors: [{ field, message }] },
  });
}

export function notFound(what = "resource"): ProblemError {
  return new ProblemError("not_found", `The ${what} does not exist.`);
}

export interface ProblemDocument extends ProblemExtensions {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  request_id?: string;
}

export function problemDocument(err: ProblemError, docsUrl: string, requestId?: string): ProblemDocument {
  return {
    type: `${docsUrl.replace(/\/$/, "")}/problems/${err.code}`,
    title: PROBLEM_CODES[err.code].title,
    status: err.status,
    detail: err.detail,
    code: err.code,
    ...err.extensions,
    ...(requestId ? { request_id: requestId } : {}),
  };
}

export function renderProblem(err: ProblemError, docsUrl: string, requestId?: string): Response {
  const headers = new Headers(err.headers);
  headers.set("Content-Type", "application/problem+json");
  return new Response(JSON.stringify(problemDocument(err, docsUrl, requestId)), {
    status: err.status,
    headers,
  });
}
