import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, refillApiBucket, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { blankPage, encodePng } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody } from "../helpers/checks";

let org: CreatedOrg;

interface ItemList {
  items: (CheckResultBody & { metadata?: unknown; review?: { check_id: string; verdict: string; reviewed_by: string } | null })[];
  next_cursor: string | null;
}
interface JobList {
  jobs: { job_id: string; status: string }[];
  next_cursor: string | null;
}

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", 11, 3);
  await enrolWriter(org.apiKey, "bob", 23, 3);
  const res = await postCheck(
    org.apiKey,
    checkForm(
      {
        job_id: "list-a",
        items: [
          {
            file: "a",
            subject_reference: "alice",
            reference: "INV-100",
            process: "loans",
            input_type: "signature_image",
            metadata: { secret: 1 },
          },
          { file: "b", subject_reference: "bob", reference: "INV-200", process: "cards" },
          { file: "blank", subject_reference: "alice", reference: "inv-300", process: "loans", file_name: "😀 scan.png" },
        ],
      },
      { a: signaturePng(11, 5), b: signaturePng(23, 5), blank: encodePng(blankPage(800, 600)) },
    ),
  );
  expect(res.status).toBe(202);
  await waitForJob(org.apiKey, "list-a");
  const one = await postCheck(
    org.apiKey,
    checkForm({ job_id: "list-b", items: [{ file: "d", subject_reference: "ghost", reference: "INV-400" }] }, { d: signaturePng(11, 6) }),
  );
  expect(one.status).toBe(200);
});

async function get<T>(query: string): Promise<T> {
  const res = await api(`/sig/checks${query}`, { key: org.apiKey });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe("GET /sig/checks", () => {
  it("lists jobs newest first, filtered by status, with cursors", async () => {
    const all = await get<JobList>("");
    expect(all.jobs.map((j) => j.job_id)).toEqual(["list-b", "list-a"]);
    const page = await get<JobList>("?view=jobs&limit=1");
    expect(page.jobs.map((j) => j.job_id)).toEqual(["list-b"]);
    const next = await get<JobList>(`?limit=1&cursor=${page.next_cursor}`);
    expect(next.jobs.map((j) => j.job_id)).toEqual(["list-a"]);
    expect(next.next_cursor).toBeNull();
    expect((await get<JobList>("?status=failed")).jobs.map((j) => j.job_id)).toEqual(["list-b"]);
  });

  it("lists items without metadata, with exact filters, the ERROR filter and the q prefix", async () => {
    const items = await get<ItemList>("?view=items");
    expect(items.items.map((i) => i.check_id)).toEqual(["list-b/0", "list-a/2", "list-a/1", "list-a/0"]);
    expect(items.items.every((i) => !("metadata" in i))).toBe(true);
    expect((await get<ItemList>("?view=items&subject_reference=alice")).items.map((i) => i.check_id)).toEqual(["list-a/2", "list-a/0"]);
    expect((await get<ItemList>("?view=items&process=loans&input_type=signature_image")).items.map((i) => i.check_id)).toEqual([
      "list-a/0",
    ]);
    expect((await get<ItemList>("?view=items&decision=ERROR")).items.map((i) => i.check_id)).toEqual(["list-b/0"]);
    expect((await get<ItemList>("?view=items&decision=NO_SIGNATURE")).items.map((i) => i.check_id)).toEqual(["list-a/2"]);
    // Case-sensitive prefix of reference, subject reference, file name or check id.
    expect((await get<ItemList>("?view=items&q=INV-")).items.map((i) => i.check_id)).toEqual(["list-b/0", "list-a/1", "list-a/0"]);
    expect((await get<ItemList>("?view=items&q=list-a/1")).items.map((i) => i.check_id)).toEqual(["list-a/1"]);
    expect((await get<ItemList>("?view=items&q=bo")).items.map((i) => i.check_id)).toEqual(["list-a/1"]);
    // A character outside the Basic Multilingual Plane is one character to the prefix, not two.
    expect((await get<ItemList>(`?view=items&q=${encodeURIComponent("😀")}`)).items.map((i) => i.check_id)).toEqual(["list-a/2"]);
    expect((await get<ItemList>(`?view=items&q=${encodeURIComponent("😀 s")}`)).items.map((i) => i.check_id)).toEqual(["list-a/2"]);
    const p1 = await get<ItemList>("?view=items&limit=3");
    const p2 = await get<ItemList>(`?view=items&limit=3&cursor=${p1.next_cursor}`);
    expect([...p1.items, ...p2.items].map((i) => i.check_id)).toEqual(items.items.map((i) => i.check_id));
  });

  it("bounds created_at exactly at any precision, and reads lower-case and leap-second date-times", async () => {
    const job = (await (await api("/sig/checks/list-b", { key: org.apiKey })).json()) as { created_at: string };
    const at = job.created_at; // to the millisecond, e.g. ...22.504Z
    const sub = (digits: string) => at.replace("Z", `${digits}Z`);
    const ids = async (query: string) => (await get<JobList>(`?view=jobs&${query}`)).jobs.map((j) => j.job_id);
    // since is inclusive: 504 is not at or after 504.1; until is exclusive: 504 is before 504.999.
    expect(await ids(`since=${sub("1")}`)).not.toContain("list-b");
    expect(await ids(`since=${at}`)).toContain("list-b");
    expect(await ids(`until=${sub("999")}`)).toContain("list-b");
    expect(await ids(`until=${at}`)).not.toContain("list-b");
    expect(await ids(`since=${at.toLowerCase()}`)).toContain("list-b");
    expect(await ids("until=2016-12-31T23:59:60Z")).toEqual([]);
    const bad = await api("/sig/checks?since=2026-02-30T00:00:00Z", { key: org.apiKey });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { field: string }[] }).errors[0].field).toBe("query.since");
  });

  it("summarises decisions (ERROR for none) and the processes seen", async () => {
    const s = await get<{ decisions: Record<string, number>; total: number; processes: string[] }>("?view=summary");
    expect(s.total).toBe(4);
    expect(s.decisions.ERROR).toBe(1);
    expect(s.decisions.NO_SIGNATURE).toBe(1);
    expect(s.processes).toEqual(["cards", "loans"]);
    const loans = await get<{ total: number }>("?view=summary&process=loans");
    expect(loans.total).toBe(2);
  });

  it("refuses a filter of another view, and a cursor it did not issue, with 400 naming them", async () => {
    for (const [q, field] of [
      ["?view=jobs&decision=FAILED", "query.decision"],
      ["?view=items&status=queued", "query.status"],
      ["?view=summary&limit=5", "query.limit"],
      ["?q=x", "query.q"],
      ["?limit=", "query.limit"],
      ["?view=items&limit=0x10", "query.limit"],
    ]) {
      const problem = await expectProblem(await api(`/sig/checks${q}`, { key: org.apiKey }), 400);
      expect(problem.errors[0].field, q).toBe(field);
      expect(problem.detail, q).toMatch(new RegExp(`^${field.replace(".", "\\.")}: `));
    }
    // In our words, not zod's ("Too big: expected string to have <=128 characters").
    const long = await expectProblem(await api(`/sig/checks?view=items&q=${"x".repeat(129)}`, { key: org.apiKey }), 400);
    expect(long.errors).toEqual([{ field: "query.q", message: "must be at most 128 characters" }]);
    expect(long.detail).toBe("query.q: must be at most 128 characters");
    const empty = await expectProblem(await api("/sig/checks?view=items&q=", { key: org.apiKey }), 400);
    expect(empty.detail).toBe("query.q: must not be empty");
    const view = await expectProblem(await api("/sig/checks?view=all", { key: org.apiKey }), 400);
    expect(view.detail).toBe("query.view: must be one of jobs, items, summary");
    const jobs = await get<JobList>("?limit=1");
    await expectProblem(await api(`/sig/checks?view=items&cursor=${jobs.next_cursor}`, { key: org.apiKey }), 400, "invalid_cursor");
    await expectProblem(await api("/sig/checks?view=items&cursor=forged", { key: org.apiKey }), 400, "invalid_cursor");
    // An empty cursor is not the first page: no route issued it.
    for (const q of ["?cursor=", "?view=jobs&cursor=", "?view=items&cursor="]) {
      const problem = await expectProblem(await api(`/sig/checks${q}`, { key: org.apiKey }), 400, "invalid_cursor");
      expect(problem.errors[0].field, q).toBe("query.cursor");
    }
  });

  it("the subject view links to its items", async () => {
    const view = (await (await api("/sig/subjects/alice", { key: org.apiKey })).json()) as {
      checks: { recent: { check_id: string }[]; total: number; next: string };
    };
    expect(view.checks.total).toBe(2);
    expect(view.checks.recent.map((r) => r.check_id)).toEqual(["list-a/2", "list-a/0"]);
    const next = new URL(view.checks.next);
    const linked = await get<ItemList>(next.search);
    expect(linked.items.map((i) => i.check_id)).toEqual(["list-a/2", "list-a/0"]);
  });

  it("items carry their reviewer's verdict (null without one) and filter on it, so a review queue needs no read per job", async () => {
    // The file's earlier requests for this organisation may have spent most of its burst.
    await refillApiBucket();
    const before = await get<ItemList>("?view=items");
    expect(before.items.map((i) => i.review)).toEqual([null, null, null, null]);
    const rejected = await api("/sig/checks/list-a/items/1/reject", {
      method: "POST",
      key: org.apiKey,
      headers: { "Idempotency-Key": crypto.randomUUID() },
    });
    expect(rejected.status, await rejected.clone().text()).toBe(200);
    const verdict = await rejected.json();

    const after = await get<ItemList>("?view=items");
    expect(after.items.map((i) => [i.check_id, i.review?.verdict ?? null])).toEqual([
      ["list-b/0", null],
      ["list-a/2", null],
      ["list-a/1", "forged"],
      ["list-a/0", null],
    ]);
    // The same record the verdict answered with, and GET /sig/checks/{job_id} shows.
    expect(after.items[2].review).toEqual(verdict);
    const job = (await (await api("/sig/checks/list-a", { key: org.apiKey })).json()) as { results: { review: unknown }[] };
    expect(job.results[1].review).toEqual(verdict);
    // On every page, whatever jobs it spans.
    const p1 = await get<ItemList>("?view=items&limit=2");
    const p2 = await get<ItemList>(`?view=items&limit=2&cursor=${p1.next_cursor}`);
    expect([...p1.items, ...p2.items]).toEqual(after.items);
    // reviewed=false is what a review queue asks for: only the items still waiting, paged as usual.
    const waiting = await get<ItemList>("?view=items&reviewed=false&limit=2");
    const rest = await get<ItemList>(`?view=items&reviewed=false&limit=2&cursor=${waiting.next_cursor}`);
    expect([...waiting.items, ...rest.items].map((i) => i.check_id)).toEqual(["list-b/0", "list-a/2", "list-a/0"]);
    expect(rest.next_cursor).toBeNull();
    expect((await get<ItemList>("?view=items&reviewed=true")).items.map((i) => i.check_id)).toEqual(["list-a/1"]);
    expect((await get<ItemList>("?view=items&reviewed=true&subject_reference=alice")).items).toEqual([]);
    for (const q of ["?view=items&reviewed=yes", "?view=jobs&reviewed=false", "?view=summary&reviewed=false"]) {
      const problem = await expectProblem(await api(`/sig/checks${q}`, { key: org.apiKey }), 400);
      expect(problem.detail, q).toContain("reviewed");
    }
    // Another organisation's verdict on the same job id and index is not this one's.
    const other = await createOrg();
    await enrolWriter(other.apiKey, "bob", 23, 3);
    const theirs = await postCheck(
      other.apiKey,
      checkForm(
        {
          job_id: "list-a",
          items: [
            { file: "b", subject_reference: "bob" },
            { file: "b", subject_reference: "bob" },
          ],
        },
        { b: signaturePng(23, 5) },
      ),
    );
    expect([200, 202]).toContain(theirs.status);
    await waitForJob(other.apiKey, "list-a");
    const theirItems = (await (await api("/sig/checks?view=items", { key: other.apiKey })).json()) as ItemList;
    expect(theirItems.items.map((i) => i.review)).toEqual([null, null]);
    const theirWaiting = (await (await api("/sig/checks?view=items&reviewed=false", { key: other.apiKey })).json()) as ItemList;
    expect(theirWaiting.items.map((i) => i.check_id)).toEqual(["list-a/1", "list-a/0"]);

    // The OpenAPI document says so: each item is a CheckResult with a required review, Confirmed or null.
    const doc = (await (await api("/openapi.json")).json()) as {
      components: { schemas: Record<string, { properties: { items: { items: { allOf: { properties?: Record<string, unknown> }[] } } } }> };
    };
    const item = doc.components.schemas.CheckItemList.properties.items.items;
    expect(item.allOf.find((s) => s.properties?.review)).toMatchObject({
      properties: { review: { anyOf: [{ $ref: "#/components/schemas/Confirmed" }, { type: "null" }] } },
      required: ["review"],
    });
  });
});
