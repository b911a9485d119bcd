import { logError } from "../util/log";
import { ProblemError } from "../http/problem";
import { REFUSAL_TEXT, refuseUrl, type UrlPolicy, type UrlRefusal } from "./url-policy";
import { specialHost } from "./host-address";
import { concatBytes } from "../util/bytes";

/**
 * Fetching callers' documents by URL (enrolment and checks). All fetches of one request share one
 * deadline (60 s); each body must keep arriving at 64 KiB per 10 s or it is abandoned as stalled;
 * every redirect target is checked against the same allowlist as the first URL.
 */
export interface FetchBudget {
  /** Epoch ms by which every fetch of the request must have finished. */
  deadline: number;
  /** Minimum bytes per stall window. */
  stallBytes: number;
  stallWindowMs: number;
  maxBytes: number;
  maxRedirects: number;
}

export const FETCH_DEADLINE_MS = 60_000;
export const STALL_WINDOW_MS = 10_000;

export function newFetchBudget(overrides: Partial<FetchBudget> & { deadlineMs?: number } = {}): FetchBudget {
  const { deadlineMs, ...rest } = overrides;
  return {
    deadline: Date.now() + (deadlineMs ?? FETCH_DEADLINE_MS),
    stallBytes: 64 * 1024,
    stallWindowMs: STALL_WINDOW_MS,
    maxBytes: 50 * 1024 * 1024,
    maxRedirects: 5,
    ...rest,
  };
}

export interface FetchedDocument {
  bytes: Uint8Array;
  contentType: string | null;
  finalUrl: string;
}

function deadlineProblem(field: string): ProblemError {
  return new ProblemError("timeout", `${field}: the URL fetches of this request did not finish within their shared deadline.`, {
    extensions: { reason: "fetch_deadline" },
  });
}

/**
 * Fetches one document. `field` names the request member the URL came from (e.g. `body.items.0.file.url`),
 * so refusals and failures point at it.
 */
export async function fetchDocument(
  rawUrl: string,
  field: string,
  policy: UrlPolicy,
  budget: FetchBudget,
  fetchImpl: typeof fetch = fetch,
): Promise<FetchedDocument> {
  let url = rawUrl;
  for (let hop = 0; ; hop++) {
    const refusal = refuseUrl(url, policy);
    if (refusal) {
      const text = refusalText(refusal, url);
      const detail =
        hop === 0 ? `${field}: the URL ${text}.` : `${field}: a redirect of the URL to ${describeTarget(url)} was refused: it ${text}.`;
      throw new ProblemError("invalid_request", detail, {
        extensions: {
          reason: hop === 0 ? refusal : "redirect_not_allowed",
          ...(hop === 0 ? {} : { redirect_refusal: refusal }),
          errors: [{ field, message: hop === 0 ? text : `redirect refused: it ${text}` }],
        },
      });
    }
    const remaining = budget.deadline - Date.now();
    if (remaining <= 0) throw deadlineProblem(field);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort("deadline"), remaining);
    let res: Response;
    try {
      res = await fetchImpl(url, { redirect: "manual", signal: controller.signal, headers: { Accept: "*/*" } });
    } catch (err) {
      clearTimeout(timer);
      if (controller.signal.aborted) throw deadlineProblem(field);
      // The runtime's own message says nothing useful ("internal error; reference = ..." for a refused
      // connection) and is not ours to show: name the host and what happened instead.
      const host = hostOf(url);
      logError("document fetch failed", err, { field, host });
      throw new ProblemError(
        "fetch_failed",
        `${field}: could not connect to ${host} (connection refused, reset or the host unreachable).`,
        { extensions: { reason: "connection_failed", host } },
      );
    }
    if (res.status >= 300 && res.status < 400 && res.headers.get("Location")) {
      clearTimeout(timer);
      await res.body?.cancel();
      if (hop >= budget.maxRedirects) {
        throw new ProblemError("fetch_failed", `${field}: more than ${budget.maxRedirects} redirects.`, {
          extensions: { reason: "too_many_redirects" },
        });
      }
      url = redirectTarget(res, url, field);
      continue;
    }
    if (!res.ok) {
      clearTimeout(timer);
      await res.body?.cancel();
      throw new ProblemError("fetch_failed", `${field}: the host answered ${res.status}.`, {
        extensions: { reason: "upstream_status", upstream_status: res.status },
      });
    }
    try {
      const bytes = await readBody(res, field, budget, controller);
      return { bytes, contentType: res.headers.get("Content-Type"), finalUrl: url };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Where a redirect points; a Location that is not a URL (even relative to the one fetched) is the host's failure. */
function redirectTarget(res: Response, url: string, field: string): string {
  const location = res.headers.get("Location")!;
  try {
    return new URL(location, url).toString();
  } catch {
    const host = hostOf(url);
    throw new ProblemError("fetch_failed", `${field}: ${host} answered ${res.status} with a Location that is not a valid URL.`, {
      extensions: { reason: "invalid_redirect", host, upstream_status: res.status },
    });
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the host";
  }
}

/** A redirect target for a message: its origin for http(s), else its scheme (a `file:` URL has no origin). */
function describeTarget(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.origin : `a ${u.protocol} URL`;
  } catch {
    return "an invalid URL";
  }
}

function refusalText(refusal: UrlRefusal, url: string): string {
  if (refusal === "scheme_not_allowed") {
    try {
      return `uses the scheme ${new URL(url).protocol}, which is not allowed (only https:)`;
    } catch {
      /* an invalid URL is reported as such below */
    }
  }
  if (refusal === "address_not_allowed") {
    try {
      return `points at ${new URL(url).hostname}, ${specialHost(new URL(url).hostname) ?? "a special address"}, which is never fetched`;
    } catch {
      /* fall through */
    }
  }
  return REFUSAL_TEXT[refusal];
}

/** Reads a body under the size bound, the shared deadline and the stall rule. */
async function readBody(res: Response, field: string, budget: FetchBudget, controller: AbortController): Promise<Uint8Array> {
  const declared = Number(res.headers.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > budget.maxBytes) {
    await res.body?.cancel();
    throw new ProblemError("too_large", `${field}: the document is ${declared} bytes, over the ${budget.maxBytes}-byte limit.`);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let windowStart = Date.now();
  let windowBytes = 0;
  // A read that outlives a stall window is kept and awaited again, so no chunk is ever dropped.
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  try {
    for (;;) {
      // Each read may wait at most until the current stall window closes or the deadline passes.
      const windowEnd = windowStart + budget.stallWindowMs;
      const waitMs = Math.max(0, Math.min(windowEnd, budget.deadline) - Date.now());
      pending ??= reader.read();
      const result = await raceTimeout(pending, waitMs);
      if (result !== "timeout") pending = null;
      const now = Date.now();
      if (result === "timeout") {
        if (now >= budget.deadline) throw deadlineProblem(field);
        // The window closed with no new chunk: fine if it had already carried enough bytes.
        if (windowBytes < budget.stallBytes) throw stalled(field, budget);
        windowStart = now;
        windowBytes = 0;
        continue;
      }
      if (result.done) break;
      total += result.value.byteLength;
      if (total > budget.maxBytes) {
        throw new ProblemError("too_large", `${field}: the document is over the ${budget.maxBytes}-byte limit.`);
      }
      chunks.push(result.value);
      windowBytes += result.value.byteLength;
      if (now >= windowEnd) {
        if (windowBytes < budget.stallBytes) throw stalled(field, budget);
        windowStart = now;
        windowBytes = 0;
      }
    }
  } catch (err) {
    controller.abort();
    reader.cancel().catch(() => {});
    throw err;
  }
  return concatBytes(chunks, total);
}

function stalled(field: string, budget: FetchBudget): ProblemError {
  return new ProblemError(
    "fetch_failed",
    `${field}: the document arrived slower than ${budget.stallBytes / 1024} KiB per ${budget.stallWindowMs / 1000} s.`,
    { extensions: { reason: "body_stalled" } },
  );
}

async function raceTimeout<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
