// A small client of the /platform/ operator routes, shared by seed.mjs and ops.mjs (local use only).
import { existsSync, readFileSync } from "node:fs";

/** OPERATOR_TOKEN from the environment, else from .dev.vars (written by `npm start`). */
export function operatorToken() {
  if (process.env.OPERATOR_TOKEN) return process.env.OPERATOR_TOKEN;
  if (existsSync(".dev.vars")) {
    const m = /^OPERATOR_TOKEN=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"));
    if (m) return m[1].trim().replace(/^"(.*)"$/, "$1");
  }
  throw new Error("No operator token: set OPERATOR_TOKEN or run `npm start` once to create .dev.vars.");
}

export function platformClient(base, token = operatorToken()) {
  async function call(method, path, json) {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(json !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    });
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (e.g. the runtime's own error page while it reloads): report the text as it is.
    }
    if (!res.ok) {
      const err = new Error(`${method} ${path} -> ${res.status} ${body?.code ?? ""}: ${body?.detail ?? text}`);
      err.status = res.status;
      err.body = body;
      throw err;
    }
    return body;
  }
  return { call };
}
