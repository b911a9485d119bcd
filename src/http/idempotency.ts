import type { Context, MiddlewareHandler } from "hono";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import type { StoredResponse } from "../../durable-objects/tenant-gate";
import type { AppEnv } from "./context";
import { ProblemError } from "./problem";
import type { RouteRules } from "./route";
import { logError } from "../util/log";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** 1 to 255 visible ASCII characters (0x21-0x7E). */
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

/** What a handler may do with the request's idempotency record (see idempotencyOf). */
export interface IdempotencyHandle {
  readonly key: string;
  /**
   * Marks the response about to be produced as a committed outcome, replayed even though it is not
   * a 2xx (e.g. 503 busy / 504 timeout of a check whose job continues).
   */
  commitOutcome(): void;
  /** A streamed check: the key will answer 409 idempotency_not_replayable pointing at the job. */
  markNotReplayable(jobId: string | null): Promise<void>;
}

const handles = new WeakMap<Context, IdempotencyHandle>();

/** The idempotency record of the current request, when it sent a key its route honours. */
export function idempotencyOf(c: Context): IdempotencyHandle | undefined {
  return handles.get(c);
}

function keyProblem(message: string): ProblemError {
  return new ProblemError("invalid_request", `${IDEMPOTENCY_HEADER}: ${message}`, {
    extensions: { errors: [{ field: IDEMPOTENCY_HEADER, message }] },
  });
}

function hex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function digestStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  const sink = new crypto.DigestStream("SHA-256");
  await stream.pipeTo(sink);
  return hex(await sink.digest);
}

/**
 * Digest of the request body as the handler will see it. Multipart bodies are digested by their
 * parts rather than their bytes, because a client's retry may choose a new boundary. The body is
 * read through Hono's body cache, so the handler reads the same buffered copy and nothing twice.
 */
async function bodyDigest(c: Context<AppEnv>): Promise<string> {
  if (c.req.raw.body === null) return "empty";
  const type = (c.req.header("Content-Type") ?? "").toLowerCase();
  if (type.startsWith("multipart/form-data")) {
    let form: FormData;
    try {
      form = await c.req.formData();
    } catch {
      throw new ProblemError("invalid_request", "body: malformed multipart/form-data", {
        extensions: { errors: [{ field: "body", message: "malformed multipart/form-data" }] },
      });
    }
    const parts: string[] = [];
    for (const [name, value] of form.entries()) {
      const entry = value as unknown;
      if (typeof entry === "string") parts.push(`${name}=s:${entry.length}:${entry}`);
      else {
        const file = entry as File;
        parts.push(`${name}=f:${file.name}:${file.type}:${file.size}:${await digestStream(file.stream())}`);
      }
    }
    return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\n"))));
  }
  return hex(await crypto.subtle.digest("SHA-256", await c.req.arrayBuffer()));
}

/** Headers that the outer middleware sets on every response; a replay gets the current request's. */
const UNSTORED_HEADERS = new Set([
  "x-request-id",
  "service-version",
  "service-latest-version",
  "deprecation",
  "sunset",
  "link",
  "content-length",
  "set-cookie",
]);

/**
 * Idempotency-Key handling (spec 4.1) with records in the TenantGate DO: new requests run and their
 * successful (or committed) outcome is stored; a retry with the same body replays it; a different
 * body or a still-running first request is a 409. Anything else releases the key. On an "optional"
 * route a request without a key simply runs; one with a key is handled exactly as above.
 */
export function idempotency(rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (rules.idempotency === "none") return next();
    // Session tokens send no key (spec 4.2 rule 6); their streamed checks are never replayed.
    if (c.get("caller")?.kind === "session") return next();

    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) {
      if (rules.idempotency === "optional") return next();
      throw keyProblem("required on this route");
    }
    if (!KEY_PATTERN.test(key)) throw keyProblem("must be 1 to 255 visible ASCII characters");

    const url = new URL(c.req.url);
    const fingerprint = `${c.req.method} ${url.pathname}${url.search} ${await bodyDigest(c)}`;
    const gate = tenantGate(c.env, c.get("tenant").org);
    const begun = await gate.begin(key, fingerprint, `${c.req.method} ${c.req.routePath}`);

    switch (begun.kind) {
      case "replay": {
        const headers = new Headers(begun.response.headers);
        headers.set("Idempotent-Replayed", "true");
        return new Response(begun.response.body, { status: begun.response.status, headers });
      }
      case "conflict":
        throw new ProblemError("idempotency_conflict", `The ${IDEMPOTENCY_HEADER} was already used with a different request.`);
      case "in_progress":
        throw new ProblemError(
          "idempotency_in_progress",
          `The first request with this ${IDEMPOTENCY_HEADER} is still running; retry once it has finished.`,
          {
            headers: { "Retry-After": "1" },
          },
        );
      case "not_replayable": {
        const where = begun.jobId ? `GET /sig/checks/${begun.jobId}` : "GET /sig/checks";
        throw new ProblemError(
          "idempotency_not_replayable",
          `The ${IDEMPOTENCY_HEADER} belonged to a streamed check, which cannot be replayed; read its result with ${where}.`,
          begun.jobId ? { extensions: { job_id: begun.jobId, status_url: `${url.origin}/sig/checks/${begun.jobId}` } } : {},
        );
      }
    }

    const lease = begun.lease;
    let committed = false;
    let settled = false;
    handles.set(c, {
      key,
      commitOutcome: () => {
        committed = true;
      },
      markNotReplayable: async (jobId) => {
        settled = true;
        await gate.markNotReplayable(key, lease, jobId);
      },
    });

    try {
      await next();
    } catch (err) {
      settled = true;
      await gate.release(key, lease).catch(() => undefined);
      throw err;
    }
    if (settled) return;

    const res = c.res;
    const replayable = (res.status >= 200 && res.status < 300) || committed;
    try {
      if (!replayable) {
        await gate.release(key, lease);
      } else if ((res.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
        // A stream cannot be stored; a route that streams should have named its job already.
        await gate.markNotReplayable(key, lease, null);
      } else {
        const body = res.body ? await res.arrayBuffer() : new ArrayBuffer(0);
        const stored: StoredResponse = { status: res.status, headers: [], body };
        res.headers.forEach((value, name) => {
          if (!UNSTORED_HEADERS.has(name.toLowerCase())) stored.headers.push([name, value]);
        });
        c.res = undefined;
        c.res = new Response(body, { status: res.status, headers: res.headers });
        await gate.complete(key, lease, stored);
      }
    } catch (err) {
      // The response stands even when the record cannot be written; the lease lets a retry proceed later.
      logError("idempotency record not written", err, { idempotency_key: key });
    }
  };
}
