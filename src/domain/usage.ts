/**
 * Usage and its charge (spec 2.6 and part 8), free of storage: which decisions are billable, what a
 * period means, and the report built from per-day decision counts.
 */
import { DECISIONS, type Decision } from "./policy-defaults";

export const BILLABLE_DECISIONS: readonly Decision[] = ["AUTO_APPROVE", "APPROVE", "FLAG", "FAILED"];
/** $0.50 per billable check item, kept in cents so sums stay exact. */
export const PRICE_PER_BILLABLE_CENTS = 50;

export function isDecision(s: string): s is Decision {
  return (DECISIONS as readonly string[]).includes(s);
}

/** Billable: a comparison was made. UNREADABLE, NO_SIGNATURE and items without a decision are free. */
export function isBillable(decision: string | null): boolean {
  return decision !== null && (BILLABLE_DECISIONS as readonly string[]).includes(decision);
}

export interface Period {
  /** `YYYY-MM`. */
  month: string;
  /** First instant of the month and of the next one (RFC 3339, UTC). */
  from: string;
  to: string;
  /** Days of the month that have begun by `now` (0 for a future month). */
  daysBegun: number;
}

/** The first instant of a UTC month (`monthIndex` 0-11; 12 is January of the next year). */
function monthStart(year: number, monthIndex: number): number {
  // Not Date.UTC: it takes years 0-99 as 1900-1999, so 0050-03 would be March 1950.
  const d = new Date(0);
  d.setUTCFullYear(year, monthIndex, 1);
  return d.getTime();
}

/**
 * `current` or `YYYY-MM` (a UTC month); null when malformed, and for 9999-12, whose end (year 10000)
 * has no RFC 3339 form for `to`.
 */
export function parsePeriod(raw: string, now: Date): Period | null {
  let year: number;
  let month: number;
  if (raw === "current") {
    year = now.getUTCFullYear();
    month = now.getUTCMonth() + 1;
  } else {
    const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(raw);
    if (!m) return null;
    year = Number(m[1]);
    month = Number(m[2]);
    if (year === 9999 && month === 12) return null;
  }
  const start = monthStart(year, month - 1);
  const end = monthStart(year, month);
  const daysInMonth = Math.round((end - start) / 86_400_000);
  const t = now.getTime();
  const daysBegun = t < start ? 0 : t >= end ? daysInMonth : Math.floor((t - start) / 86_400_000) + 1;
  return {
    month: `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}`,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    daysBegun,
  };
}

/** One row of counts: items of one UTC day with one decision (null = no decision). */
export interface DailyDecisionCount {
  /** `YYYY-MM-DD`. */
  day: string;
  decision: string | null;
  count: number;
}

export interface UsageCounts {
  checks: number;
  billable_checks: number;
  not_charged: number;
}

export interface UsageReport extends UsageCounts {
  period: string;
  from: string;
  to: string;
  decisions: Record<Decision, number> & { errors: number };
  estimate: { currency: "USD"; unit_price: string; billable_checks: number; amount: string; amount_cents: number };
  billing: { mode: "self" | "parent"; detail: string };
  daily: (UsageCounts & { date: string })[];
}

function dollars(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

export function buildUsageReport(period: Period, rows: DailyDecisionCount[], billedThroughParent: boolean): UsageReport {
  const decisions = Object.fromEntries(DECISIONS.map((d) => [d, 0])) as Record<Decision, number>;
  let errors = 0;
  const days = new Map<string, UsageCounts>();
  const start = Date.parse(period.from);
  for (let i = 0; i < period.daysBegun; i++) {
    days.set(new Date(start + i * 86_400_000).toISOString().slice(0, 10), { checks: 0, billable_checks: 0, not_charged: 0 });
  }
  const total: UsageCounts = { checks: 0, billable_checks: 0, not_charged: 0 };
  for (const r of rows) {
    if (r.decision !== null && isDecision(r.decision)) decisions[r.decision] += r.count;
    else errors += r.count;
    const billable = isBillable(r.decision);
    for (const c of [total, days.get(r.day)]) {
      if (!c) continue;
      c.checks += r.count;
      if (billable) c.billable_checks += r.count;
      else c.not_charged += r.count;
    }
  }
  const cents = total.billable_checks * PRICE_PER_BILLABLE_CENTS;
  return {
    period: period.month,
    from: period.from,
    to: period.to,
    ...total,
    decisions: { ...decisions, errors },
    estimate: {
      currency: "USD",
      unit_price: dollars(PRICE_PER_BILLABLE_CENTS),
      billable_checks: total.billable_checks,
      amount: dollars(cents),
      amount_cents: cents,
    },
    billing: billedThroughParent
      ? { mode: "parent", detail: "Billed through the parent organisation, which is invoiced; the amount is shown for information." }
      : { mode: "self", detail: "Invoiced to this organisation." },
    daily: [...days.entries()].map(([date, c]) => ({ date, ...c })),
  };
}
