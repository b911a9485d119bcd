import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody } from "../helpers/checks";

let org: CreatedOrg;
const WRITER = 11;
const OTHER = 57;
const settings = env as unknown as Record<string, string | undefined>;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 4);
});

interface SseRecord {
  event: string | null;
  data: unknown;
  comment: string | null;
}

/** Splits an SSE body into records (events and comments), in order. */
function parseSse(text: string): SseRecord[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const comment = lines.find((l) => l.startsWith(":"));
      const event =
        lines
          .find((l) => l.startsWith("event:"))
          ?.slice(6)
          .trim() ?? null;
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("\n");
      return { event, data: data ? JSON.parse(data) : null, comment: comment ? comment.slice(1).trim() : null };
    });
}

function streamed(idem: string, writer: number, variant: number) {
  return postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(writer, variant) }), {
    idem,
    accept: "text/event-stream",
  });
}

describe("streamed checks", () => {
  it("answers JSON, and keeps the key replayable, when Accept refuses the stream (q=0) or prefers JSON", async () => {
    for (const [idem, accept] of [
      ["no-stream-1", "text/event-stream;q=0, application/json"],
      ["no-stream-2", "text/event-stream;q=0.5, application/json"],
    ]) {
      const form = () => checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 6) });
      const res = await postCheck(org.apiKey, form(), { idem, accept });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain("application/json");
      const again = await postCheck(org.apiKey, form(), { idem, accept });
      expect(again.status).toBe(200);
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    }
  });

  it("sends received, quality, located, comparing and decision in order, with keep-alive comments", async () => {
    settings.CHECK_KEEPALIVE_MS = "15";
    let records: SseRecord[];
    try {
      const res = await streamed("stream-1", WRITER, 5);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain("text/event-stream");
      records = parseSse(await res.text());
    } finally {
      delete settings.CHECK_KEEPALIVE_MS;
    }
    const events = records.filter((r) => r.event !== null);
    expect(events.map((e) => e.event)).toEqual(["received", "quality", "located", "comparing", "decision"]);
    expect(events[0].data).toEqual({ job_id: "stream-1" });
    expect((events[1].data as { score: number }).score).toBeGreaterThan(0);
    expect((events[2].data as { signatures: unknown[] }).signatures.length).toBeGreaterThanOrEqual(1);
    expect(events[3].data).toEqual({ reference_count: 4 });
    const result = events[4].data as CheckResultBody;
    expect(result).toMatchObject({ check_id: "stream-1/0", subject_reference: "alice" });
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(result.decision);
    expect(records.some((r) => r.comment === "keep-alive")).toBe(true);

    // Each event's data has exactly the members the OpenAPI document names for it.
    const doc = (await (await exports.default.fetch("https://api.countersign.localhost/openapi.json")).json()) as {
      components: { schemas: Record<string, { required?: string[]; properties?: Record<string, { items?: { required?: string[] } }> }> };
    };
    const members = (name: string) => [...(doc.components.schemas[name].required ?? [])].sort();
    const keys = (o: unknown) => Object.keys(o as object).sort();
    expect(keys(events[0].data)).toEqual(members("CheckStreamReceived"));
    expect(keys(events[1].data)).toEqual(members("CheckStreamQuality"));
    expect(keys((events[1].data as { figures: object }).figures)).toEqual(members("QualityFigures"));
    expect(keys(events[2].data)).toEqual(members("CheckStreamLocated"));
    const signature = (events[2].data as { signatures: object[] }).signatures[0];
    expect(keys(signature)).toEqual([...doc.components.schemas.CheckStreamLocated.properties!.signatures.items!.required!].sort());
    expect(keys(events[3].data)).toEqual(members("CheckStreamComparing"));

    // The streamed outcome is stored like any other.
    const job = await waitForJob(org.apiKey, "stream-1");
    expect(job.results[0].decision).toBe(result.decision);
  });

  it("streams FAILED for another writer's signature", async () => {
    const res = await streamed("stream-2", OTHER, 0);
    const events = parseSse(await res.text()).filter((r) => r.event !== null);
    expect(events.at(-1)!.event).toBe("decision");
    expect((events.at(-1)!.data as CheckResultBody).decision).toBe("FAILED");
  });

  it("answers a retry of a streamed check's key with 409 idempotency_not_replayable pointing at the job", async () => {
    await (await streamed("stream-3", WRITER, 6)).text();
    const retry = await streamed("stream-3", WRITER, 6);
    const problem = await expectProblem(retry, 409, "idempotency_not_replayable");
    expect(problem.job_id).toBe("stream-3");
    expect(problem.detail).toContain("GET /sig/checks/stream-3");
  });

  it("ends with an error event carrying job_id and status_url when the job goes on asynchronously", async () => {
    settings.CHECK_CAPACITY = "0";
    let events: SseRecord[];
    try {
      events = parseSse(await (await streamed("stream-4", WRITER, 7)).text()).filter((r) => r.event !== null);
    } finally {
      delete settings.CHECK_CAPACITY;
    }
    expect(events.map((e) => e.event)).toEqual(["received", "error"]);
    expect(events[1].data).toMatchObject({ code: "busy", status: 503, job_id: "stream-4" });
    expect((events[1].data as { status_url: string }).status_url).toMatch(/\/sig\/checks\/stream-4$/);
    const job = await waitForJob(org.apiKey, "stream-4");
    expect(job.status).toBe("completed");
  });

  it("refuses a stream of more than one item with 400", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm(
        {
          items: [
            { file: "d", subject_reference: "alice" },
            { file: "d", subject_reference: "alice" },
          ],
        },
        { d: signaturePng(WRITER, 1) },
      ),
      { accept: "text/event-stream" },
    );
    await expectProblem(res, 400, "invalid_request");
    expect((await api("/sig/checks/stream-none", { key: org.apiKey })).status).toBe(404);
  });
});
