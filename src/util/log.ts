import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Structured logs: one JSON object per line, which Workers Logs indexes field by field. Lines written
 * while a request is handled carry its `request_id` (and whatever else the request's context holds)
 * without it being passed down, so a service deep in the request path logs the same way a route does.
 */

export type LogFields = Record<string, unknown>;
type Level = "info" | "warn" | "error";

const context = new AsyncLocalStorage<LogFields>();

/** Runs `fn` with `fields` added to every line it logs, however deep (the request's id, for one). */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

export function logInfo(msg: string, fields: LogFields = {}): void {
  write("info", msg, fields);
}

export function logWarn(msg: string, fields: LogFields = {}): void {
  write("warn", msg, fields);
}

/** An error line: the message, the error's name, message and stack (when there is one), and the context's request id. */
export function logError(msg: string, err?: unknown, fields: LogFields = {}): void {
  write("error", msg, { ...fields, ...(err === undefined ? {} : { error: describeError(err) }) });
}

function write(level: Level, msg: string, fields: LogFields): void {
  const line = JSON.stringify({ level, msg, ...context.getStore(), ...fields });
  // The console method sets the level Workers Logs shows; the line itself is the record.
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

function describeError(err: unknown): LogFields {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, ...(code !== undefined ? { code } : {}), stack: err.stack };
  }
  return { message: String(err) };
}
