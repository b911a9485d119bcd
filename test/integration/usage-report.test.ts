import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, mintKey, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { blankPage, encodePng } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck } from "../helpers/checks";

interface Usage {
  period: string;
  checks: number;
  billable_checks: number;
  not_charged: number;
  decisions: Record<string, number>;
  estimate: { amount: string; amount_cents: number; unit_price: string; currency: string };
  billing: { mode: string };
  daily: { date: string; checks: number; billable_checks: number; not_charged: number }[];
}

let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", 11, 3);
});

describe("GET /sig/usage", () => {
  it("reports this month's checks, decisions, the estimate and one daily entry per begun day", async () => {
    const empty = (await (await api("/sig/usage", { key: org.apiKey })).json()) as Usage;
    const now = new Date();
    expect(empty).toMatchObject({ period: now.toISOString().slice(0, 7), checks: 0, billable_checks: 0, billing: { mode: "self" } });
    expect(empty.daily).toHaveLength(now.getUTCDate());
    expect(empty.daily.at(-1)!.date).toBe(now.toISOString().slice(0, 10));

    const same = await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 5) }));
    const other = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(57, 1) }),
    );
    const blank = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: encodePng(blankPage(900, 600)) }),
    );
    const error = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "d", subject_reference: "ghost" }] }, { d: signaturePng(11, 5) }),
    );
    const decisions = [];
    for (const r of [same, other, blank, error]) {
      expect(r.status).toBe(200);
      decisions.push(((await r.json()) as { decision: string | null }).decision);
    }
    expect(decisions[2]).toBe("NO_SIGNATURE");
    expect(decisions[3]).toBeNull();

    const usage = (await (await api("/sig/usage?period=current", { key: org.apiKey })).json()) as Usage;
    expect(usage).toMatchObject({ checks: 4, billable_checks: 2, not_charged: 2 });
    expect(usage.decisions.NO_SIGNATURE).toBe(1);
    expect(usage.decisions.errors).toBe(1);
    expect(usage.decisions.FAILED + usage.decisions.APPROVE + usage.decisions.AUTO_APPROVE + usage.decisions.FLAG).toBe(2);
    expect(usage.estimate).toMatchObject({ currency: "USD", unit_price: "0.50", amount: "1.00", amount_cents: 100 });
    expect(usage.daily.at(-1)).toMatchObject({ checks: 4, billable_checks: 2, not_charged: 2 });
    expect(usage.daily.slice(0, -1).every((d) => d.checks === 0)).toBe(true);
  });

  it("takes a past month (all its days) and refuses a malformed period", async () => {
    const past = (await (await api("/sig/usage?period=2026-02", { key: org.apiKey })).json()) as Usage;
    expect(past).toMatchObject({ period: "2026-02", checks: 0 });
    expect(past.daily).toHaveLength(28);
    for (const p of ["2026-13", "202611", "last", "2026-1", "9999-12"]) {
      const problem = await expectProblem(await api(`/sig/usage?period=${p}`, { key: org.apiKey }), 400, "invalid_request");
      expect(problem.errors[0].field).toBe("query.period");
    }
  });

  it("reports a month of a year below 100 as that month, not the same month of the 1900s", async () => {
    const res = await api("/sig/usage?period=0050-03", { key: org.apiKey });
    expect(res.status).toBe(200);
    const usage = (await res.json()) as Usage & { from: string; to: string };
    expect(usage).toMatchObject({ period: "0050-03", from: "0050-03-01T00:00:00.000Z", to: "0050-04-01T00:00:00.000Z", checks: 0 });
    expect(usage.daily).toHaveLength(31);
    expect([usage.daily[0].date, usage.daily.at(-1)!.date]).toEqual(["0050-03-01", "0050-03-31"]);
  });

  it("shows billing mode parent for an organisation billed through its parent", async () => {
    const child = await createOrg({ parentId: org.orgId, billing: "parent" });
    const usage = (await (await api("/sig/usage", { key: child.apiKey })).json()) as Usage;
    expect(usage.billing.mode).toBe("parent");
    expect(usage.checks).toBe(0);
  });

  it("needs org:read", async () => {
    const { apiKey } = await mintKey(org.orgId, ["sig:checks:read"]);
    const problem = await expectProblem(await api("/sig/usage", { key: apiKey }), 403, "permission_denied");
    expect(problem.detail).toContain("org:read");
  });
});
