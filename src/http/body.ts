import type { RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { ProblemError, invalidField } from "./problem";

/**
 * Largest request body (spec part 8): a 50 MB document plus multipart framing. MB is read as MiB, as
 * the document limits elsewhere are (50 * 1024 * 1024), so the largest document always fits.
 */
export const MAX_BODY_BYTES = 51 * 1024 * 1024;
/** The most of a half-read body drained (read and dropped) after the response is decided; see settle. */
export const DRAIN_BYTES = MAX_BODY_BYTES;
/** A request body must be fully received within this time (spec part 8). */
export const BODY_DEADLINE_MS = 120_000;

export interface BodyLimitOptions {
  maxBytes?: number;
  /** Configurable so tests need not wait two minutes. */
  deadlineMs?: number;
  /** The most of a half-read body drained before the response; default DRAIN_BYTES. */
  drainBytes?: number;
}

interface BodyState {
  limit: number;
  received: number;
  /** Why the body could not be read; it decides the response whatever the handler made of it. */
  failure: ProblemError | null;
}

const states = new WeakMap<Request, BodyState>();

function tooLarge(limit: number): ProblemError {
  return new ProblemError("too_large", `The request body exceeds the limit of ${limit} bytes.`);
}

function declaredLength(c: Context): number | null {
  const header = c.req.header("Content-Length");
  if (header === undefined || !/^\d+$/.test(header.trim())) return null;
  return Number(header.trim());
}

/**
 * Global body limits: 413 too_large past the size limit (by Content-Length up front, and by counting
 * the bytes as they stream in), and 408 timeout when the body has not fully arrived in time. The
 * request's body is swapped for a guarded stream, so every reader (Hono's body cache, formData,
 * a handler's own stream) is subject to the same limits.
 */
export function bodyLimits(options: BodyLimitOptions = {}): MiddlewareHandler<AppEnv> {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const deadlineMs = options.deadlineMs ?? BODY_DEADLINE_MS;
  const drainBytes = options.drainBytes ?? DRAIN_BYTES;

  return async (c, next) => {
    const source = c.req.raw.body;
    // A GET or HEAD may arrive with a body, which no route reads: the runtime discards it, and a Request
    // of those methods cannot be built with one (that threw, and every such request got a 500).
    if (source === null || c.req.method === "GET" || c.req.method === "HEAD") return next();
    // Past the service's own maximum a body is refused at once, before the caller is known, as a front
    // proxy would: it is a bound of the transport, not a rule of a route. A route's tighter limit and its
    // media types are checked after authentication (bodyRules).
    const length = declaredLength(c);
    if (length !== null && length > maxBytes) throw tooLarge(maxBytes);

    const state: BodyState = { limit: maxBytes, received: 0, failure: null };
    // The reader is taken on the first read only: a source locked by a reader nobody drains or cancels
    // leaves the connection unusable (on `wrangler dev` the next request hangs or gets a 503).
    let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
    let finished = false;
    let timer: number | null = null;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ProblemError("timeout", `The request body was not fully received within ${Math.round(deadlineMs / 1000)} s.`, {
              status: 408,
            }),
          ),
        deadlineMs,
      );
    });
    deadline.catch(() => undefined);
    const stop = (reason?: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      reader?.cancel(reason).catch(() => undefined);
    };
    const fail = (controller: ReadableStreamDefaultController<Uint8Array>, err: ProblemError) => {
      state.failure ??= err;
      controller.error(err);
      // A body past its limit is drained before answering (see settle); a stalled one is given up.
      if (err.status !== 413) stop(err);
    };
    /**
     * Finishes the exchange once the response is made. A body never read is left to the runtime, which
     * discards it. A body read in part is drained before the response goes out (the runtime refuses reads
     * after it): cancelling or abandoning a half-read body breaks the connection (on `wrangler dev` the
     * next request hangs or gets a 503). The drain is bounded by drainBytes and the body deadline; past
     * either, the body is cancelled.
     */
    const settle = async () => {
      if (finished) return;
      if (reader === null) {
        // Never read: nothing to drain, and the deadline must not hold the request for its 120 s.
        finished = true;
        clearTimeout(timer);
        return;
      }
      let drained = 0;
      try {
        for (;;) {
          const chunk = await Promise.race([reader.read(), deadline]);
          if (chunk.done) break;
          drained += chunk.value.byteLength;
          if (drained > drainBytes) return stop();
        }
        finished = true;
        clearTimeout(timer);
      } catch (err) {
        stop(err);
      }
    };

    const guarded = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          reader ??= source.getReader();
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await Promise.race([reader.read(), deadline]);
          } catch (err) {
            if (err instanceof ProblemError) return fail(controller, err);
            controller.error(err);
            stop(err);
            return;
          }
          if (chunk.done) {
            finished = true;
            clearTimeout(timer);
            controller.close();
            return;
          }
          state.received += chunk.value.byteLength;
          if (state.received > state.limit) return fail(controller, tooLarge(state.limit));
          controller.enqueue(chunk.value);
        },
        cancel() {
          // The source is not cancelled here: settle drains what a reader left (see there).
        },
      },
      // No read ahead: nothing touches the source until a handler asks for the body.
      { highWaterMark: 0 },
    );
    const request = new Request(c.req.raw, { body: guarded });
    states.set(request, state);
    c.req.raw = request;

    try {
      await next();
    } finally {
      await settle();
    }
    if (state.failure) {
      // Whatever the handler answered was built on a body that never fully arrived.
      throw state.failure;
    }
  };
}

/** Lowers the body limit of the current request (per-route limits below the global one). */
export function tightenBodyLimit(c: Context, maxBytes: number): void {
  const length = declaredLength(c);
  if (length !== null && length > maxBytes) throw tooLarge(maxBytes);
  const state = states.get(c.req.raw);
  if (state) state.limit = Math.min(state.limit, maxBytes);
}

/** An empty body (`Content-Length: 0`) is no body: routes whose body is optional accept it untyped. */
function hasBody(c: Context): boolean {
  return c.req.raw.body !== null && declaredLength(c) !== 0;
}

function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0].trim().toLowerCase();
}

function isJson(type: string): boolean {
  return /^application\/([\w.-]+\+)?json$/.test(type);
}

/** The body rules a route's contract implies. `x-max-body` on the route config sets its own size limit. */
export function bodyRules(config: RouteConfig): { before: MiddlewareHandler<AppEnv>[]; after: MiddlewareHandler<AppEnv>[] } {
  const body = config.request?.body as { content?: Record<string, unknown>; required?: boolean } | undefined;
  const content = body?.content;
  const optional = body !== undefined && body.required !== true;
  const types = content ? Object.keys(content).map((t) => t.toLowerCase()) : [];
  const maxBody = (config as { "x-max-body"?: number })["x-max-body"];
  if (types.length === 0 && maxBody === undefined) return { before: [], after: [] };

  // Size and type are checked once the caller is authenticated and allowed (pipeline.ts), before anything
  // reads the body: a caller without a credential gets 401, not a lesson on the body.
  const before: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (maxBody !== undefined) tightenBodyLimit(c, maxBody);
    if (optional && !hasBody(c) && c.req.header("Content-Type") !== undefined) {
      // An optional body sent empty is no body, whatever its Content-Type says: the contract's validator
      // would parse "" as JSON and refuse it (many clients send the JSON type on every POST).
      const headers = new Headers(c.req.raw.headers);
      headers.delete("Content-Type");
      c.req.raw = new Request(c.req.raw, { headers });
    }
    if (types.length > 0 && hasBody(c)) {
      const type = mediaType(c.req.header("Content-Type"));
      if (!types.includes(type)) {
        throw new ProblemError(
          "unsupported_media_type",
          `Content-Type ${type || "(none)"} is not accepted here; send ${types.join(" or ")}.`,
          { extensions: { errors: [{ field: "Content-Type", message: `must be ${types.join(" or ")}` }] } },
        );
      }
    }
    return next();
  };
  // Malformed JSON names the body (after authentication: an anonymous caller learns nothing of it).
  const after: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (hasBody(c) && isJson(mediaType(c.req.header("Content-Type")))) {
      try {
        await c.req.json();
      } catch (err) {
        if (err instanceof ProblemError) throw err;
        const state = states.get(c.req.raw);
        if (state?.failure) throw state.failure;
        throw invalidField("body", "malformed JSON");
      }
    }
    return next();
  };
  return { before: [before], after: [after] };
}
