/** Test helper: minting sessions through the Worker, and session-token checks. */
import { expect } from "vitest";
import { api } from "./tenant";

export interface SessionBody {
  session_id: string;
  token: string;
  subject_reference: string;
  policy: string;
  input_type: string;
  expires_at: string;
  job_id: string;
  status_url: string;
  live_url: string;
  capture_url: string;
}

export async function mintSession(key: string, body: Record<string, unknown>): Promise<SessionBody> {
  const res = await api("/sig/sessions", { method: "POST", key, json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as SessionBody;
}

/** A streamed check with a session token: no Idempotency-Key. */
export function sessionCheck(token: string, form: FormData, accept = "text/event-stream"): Promise<Response> {
  return api("/sig/checks", { method: "POST", key: token, body: form, headers: { Accept: accept } });
}

/** A problem document of this status and code, whose detail matches `detail` when given. */
export async function expectRefusal(res: Response, status: number, code: string, detail?: RegExp): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as { code: string; detail: string };
  expect(body.code).toBe(code);
  if (detail) expect(body.detail).toMatch(detail);
}
