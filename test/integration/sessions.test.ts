import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, operator, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { checkForm, enrolWriter } from "../helpers/checks";
import { expectRefusal, mintSession, sessionCheck } from "../helpers/sessions";

let org: CreatedOrg;
const WRITER = 23;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 3);
  await enrolWriter(org.apiKey, "bob", 41, 3);
});

function events(text: string): { event: string; data: unknown }[] {
  return text
    .split(/\n\n/)
    .map((b) => b.split("\n"))
    .filter((lines) => lines.some((l) => l.startsWith("event:")))
    .map((lines) => ({
      event: lines
        .find((l) => l.startsWith("event:"))!
        .slice(6)
        .trim(),
      data: JSON.parse(
        lines
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5))
          .join("\n"),
      ),
    }));
}

const oneItem = (extra: Record<string, unknown> = {}, request: Record<string, unknown> = {}) =>
  checkForm({ items: [{ file: "doc", subject_reference: "alice", ...extra }], ...request }, { doc: signaturePng(WRITER, 7) });

describe("POST /sig/sessions", () => {
  it("mints a token shown once, stores only its hash, and answers no-store", async () => {
    const res = await api("/sig/sessions", { method: "POST", key: org.apiKey, json: { subject_reference: "alice", reference: "loan-7" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const s = (await res.json()) as {
      token: string;
      session_id: string;
      job_id: string;
      expires_at: string;
      created_at: string;
      capture_url: string;
    };
    expect(s.token).toMatch(/^svc_ses_[0-9A-Za-z]{50}$/);
    expect(s.session_id).toMatch(/^ses_[0-9A-Za-z]{16}$/);
    expect(s.job_id).toBe(`chk_ses_${s.session_id.slice(4)}`);
    // Default lifetime 15 minutes.
    expect(Date.parse(s.expires_at) - Date.parse(s.created_at)).toBe(15 * 60 * 1000);
    // The link carries the token in the fragment, never in the query.
    expect(new URL(s.capture_url).search).toBe("");
    expect(new URL(s.capture_url).hash).toBe(`#session=${s.token}&subject=alice`);
    const rows = await env.DB_US.prepare("SELECT * FROM sessions WHERE org_id = ?").bind(org.orgId).all<Record<string, unknown>>();
    const stored = JSON.stringify(rows.results);
    expect(stored).not.toContain(s.token.slice(8));
    expect(stored).not.toContain(s.token.slice(-32));
  });

  it("answers 404 for an unknown subject, 400 for a bad lifetime or an unknown policy, 402 without billing", async () => {
    await expectRefusal(
      await api("/sig/sessions", { method: "POST", key: org.apiKey, json: { subject_reference: "nobody" } }),
      404,
      "not_found",
    );
    const tooLong = await api("/sig/sessions", { method: "POST", key: org.apiKey, json: { subject_reference: "alice", expires_in: 7200 } });
    expect(tooLong.status).toBe(400);
    // In our words, not zod's ("Too big: expected number to be <=3600").
    expect(((await tooLong.json()) as { errors: { field: string; message: string }[] }).errors[0]).toEqual({
      field: "body.expires_in",
      message: "must be at most 3600",
    });
    const extra = await api("/sig/sessions", { method: "POST", key: org.apiKey, json: { subject_reference: "alice", colour: "red" } });
    expect(((await extra.json()) as { detail: string }).detail).toBe("body: holds a member it does not take: colour");
    const badPolicy = await api("/sig/sessions", {
      method: "POST",
      key: org.apiKey,
      json: { subject_reference: "alice", policy: "strict" },
    });
    expect(badPolicy.status).toBe(400);
    const unpaid = await createOrg({ billing: "inactive" });
    await expectRefusal(
      await api("/sig/sessions", { method: "POST", key: unpaid.apiKey, json: { subject_reference: "alice" } }),
      402,
      "billing_required",
    );
  });

  it("needs sig:checks:create", async () => {
    const reader = await createOrg({ permissions: ["sig:checks:read"] });
    await expectRefusal(
      await api("/sig/sessions", { method: "POST", key: reader.apiKey, json: { subject_reference: "alice" } }),
      403,
      "permission_denied",
    );
  });
});

describe("a session's streamed check", () => {
  it("runs once for the session's subject, under the announced job id, with the session's reference", async () => {
    const s = await mintSession(org.apiKey, {
      subject_reference: "alice",
      reference: "loan-7",
      input_type: "signature_image",
      metadata: { order: 42 },
    });
    // The client's own item metadata does not replace what the server recorded.
    const res = await sessionCheck(s.token, oneItem({ metadata: { order: 1 } }));
    expect(res.status).toBe(200);
    const evs = events(await res.text());
    expect(evs.map((e) => e.event)).toEqual(["received", "quality", "located", "comparing", "decision"]);
    expect(evs[0].data).toEqual({ job_id: s.job_id });
    const decision = evs[4].data as {
      subject_reference: string;
      reference: string;
      input_type: string;
      decision: string;
      metadata: unknown;
    };
    expect(decision.subject_reference).toBe("alice");
    expect(decision.metadata).toEqual({ order: 42 });
    expect(decision.reference).toBe("loan-7");
    expect(decision.input_type).toBe("signature_image");
    expect(["AUTO_APPROVE", "APPROVE"]).toContain(decision.decision);
    // The integrator's server reads it with its key.
    expect((await api(`/sig/checks/${s.job_id}`, { key: org.apiKey })).status).toBe(200);
    // One check per session.
    const again = await sessionCheck(s.token, oneItem());
    await expectRefusal(again, 409, "conflict");
  });

  it("is refused as rule 6 says: 403 for references, URL inputs, policy, target, template_id, another subject or no stream; 400 for job_id", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    const refs = checkForm(
      { items: [{ file: "doc", subject_reference: "alice", references: ["r1"] }] },
      { doc: signaturePng(WRITER, 7), r1: signaturePng(WRITER, 1) },
    );
    await expectRefusal(await sessionCheck(s.token, refs), 403, "permission_denied", /references/);
    const url = await api("/sig/checks", {
      method: "POST",
      key: s.token,
      json: { items: [{ file: { url: "https://files.example/doc.png" }, subject_reference: "alice" }] },
      headers: { Accept: "text/event-stream" },
    });
    await expectRefusal(url, 403, "permission_denied", /URL inputs/);
    // A multipart body may name a {url} input too: as much a URL input, 403 before anything is fetched.
    const urlInMultipart = checkForm({ items: [{ file: { url: "https://files.example/doc.png" }, subject_reference: "alice" }] }, {});
    await expectRefusal(await sessionCheck(s.token, urlInMultipart), 403, "permission_denied", /URL inputs/);
    await expectRefusal(await sessionCheck(s.token, oneItem({}, { policy: "default" })), 403, "permission_denied", /policy/);
    await expectRefusal(await sessionCheck(s.token, oneItem({ target: { page: 1 } })), 403, "permission_denied", /target/);
    await expectRefusal(await sessionCheck(s.token, oneItem({ template_id: "form-a" })), 403, "permission_denied", /template_id/);
    await expectRefusal(await sessionCheck(s.token, oneItem({ subject_reference: "bob" })), 403, "permission_denied", /subject/);
    await expectRefusal(await sessionCheck(s.token, oneItem(), "application/json"), 403, "permission_denied", /streamed/);
    const withJobId = await sessionCheck(s.token, oneItem({}, { job_id: "mine" }));
    expect(withJobId.status).toBe(400);
    expect(((await withJobId.json()) as { errors: { field: string }[] }).errors[0].field).toBe("body.request.job_id");
    // None of the refusals used up the session's one check.
    expect((await sessionCheck(s.token, oneItem())).status).toBe(200);
  });

  it("works on no other route (401)", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    await expectRefusal(await api("/sig/subjects", { key: s.token }), 401, "unauthorized", /accepted only/);
    await expectRefusal(await api(`/sig/checks/${s.job_id}`, { key: s.token }), 401, "unauthorized");
  });
});

describe("session lifecycle", () => {
  it("DELETE revokes (204, again 204), 404 for an unknown or malformed id; a revoked token is 401", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    expect((await api(`/sig/sessions/${s.session_id}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await api(`/sig/sessions/${s.session_id}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    await expectRefusal(await api("/sig/sessions/ses_0000000000000000", { method: "DELETE", key: org.apiKey }), 404, "not_found");
    await expectRefusal(await api("/sig/sessions/nonsense", { method: "DELETE", key: org.apiKey }), 404, "not_found");
    await expectRefusal(await sessionCheck(s.token, oneItem()), 401, "unauthorized", /revoked/);
  });

  it("another tenant's session is not found", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    const other = await createOrg();
    await expectRefusal(await api(`/sig/sessions/${s.session_id}`, { method: "DELETE", key: other.apiKey }), 404, "not_found");
  });

  it("an expired session is 401", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice", expires_in: 60 });
    // Time passing, without waiting for it: the session's expiry moves into the past.
    await env.DB_US.prepare("UPDATE sessions SET expires_at = ? WHERE session_id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), s.session_id.slice(4))
      .run();
    await expectRefusal(await sessionCheck(s.token, oneItem()), 401, "unauthorized", /expired/);
  });

  it("a forged secret or unknown token is 401", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    const forged = s.token.slice(0, -4) + (s.token.endsWith("AAAA") ? "BBBB" : "AAAA");
    await expectRefusal(await sessionCheck(forged, oneItem()), 401, "unauthorized", /not valid/);
    await expectRefusal(await sessionCheck("svc_ses_short", oneItem()), 401, "unauthorized", /malformed/);
  });

  it("is 401 while its organisation or one above it is suspended", async () => {
    const parent = await createOrg();
    const child = await createOrg({ parentId: parent.orgId });
    await enrolWriter(child.apiKey, "carol", WRITER, 1);
    const own = await mintSession(child.apiKey, { subject_reference: "carol" });
    await operator("POST", `/platform/orgs/${child.orgId}/suspend`);
    await expectRefusal(await sessionCheck(own.token, oneItem()), 401, "unauthorized", /suspended/);
    await operator("POST", `/platform/orgs/${child.orgId}/unsuspend`);
    await operator("POST", `/platform/orgs/${parent.orgId}/suspend`);
    await expectRefusal(await sessionCheck(own.token, oneItem()), 401, "unauthorized", /suspended through/);
  });

  it("deleting the subject revokes its sessions", async () => {
    await enrolWriter(org.apiKey, "dave", WRITER, 1);
    const s = await mintSession(org.apiKey, { subject_reference: "dave" });
    expect((await api("/sig/subjects/dave", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    await expectRefusal(await sessionCheck(s.token, oneItem()), 401, "unauthorized", /revoked/);
  });
});
