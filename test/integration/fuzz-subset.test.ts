/**
 * The fuzzer's fixed-seed subset (about 1,000 cases, fuzz/core/suite.ts): mutated PNG, JPEG, TIFF and
 * PDF files through the decoders, and multipart bodies through the Worker's fetch (routing, auth, body
 * limits, parsing and the full decode path). Every decoder failure must be a VerifyError, every answer
 * a documented status with a problem document, never a 5xx. Cases that hit defects being fixed on other
 * branches are listed in PENDING_DEFECTS (fuzz/core/suite.ts) and left out until their fix merges.
 *
 * The per-case bound is generous; in workerd the clock only moves across I/O, so for the synchronous
 * decoders it is the test timeout that bounds a hang. `npm run fuzz` measures real time and memory.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { decodeOutcome, httpFinding } from "../../fuzz/core/oracle";
import { SUITE_CASES, SUITE_CASE_BOUND_MS, suiteCases } from "../../fuzz/core/suite";
import type { DocFormat, FuzzCase, Seed } from "../../fuzz/core/types";
import { FUZZ_SUBJECT } from "../../fuzz/mutators/multipart";
import { buildSeeds } from "../../fuzz/seeds/index";
import { enrolWriter } from "../helpers/checks";
import { BASE, createOrg } from "../helpers/tenant";

let corpus: Seed[];
beforeAll(async () => {
  corpus = await buildSeeds();
});

const describeCase = (c: FuzzCase) => `#${c.index} ${c.seed} ${c.mutations.join(" ")}`;

describe("fuzz subset: decoders refuse damaged files with typed errors", () => {
  for (const format of ["png", "jpeg", "tiff", "pdf"] as DocFormat[]) {
    it(`${format}: ${SUITE_CASES[format]} mutated files`, { timeout: 60_000 }, async () => {
      const { cases } = suiteCases(corpus, format);
      expect(cases).toHaveLength(SUITE_CASES[format]);
      const failures: string[] = [];
      const outcomes: Record<string, number> = {};
      for (const c of cases) {
        const t = performance.now();
        const out = await decodeOutcome(c.bytes);
        const ms = performance.now() - t;
        const key = out.kind === "typed" ? out.code : out.kind;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
        if (out.kind === "untyped") failures.push(`${describeCase(c)}: untyped ${out.error}`);
        if (ms > SUITE_CASE_BOUND_MS.decode) failures.push(`${describeCase(c)}: ${Math.round(ms)} ms`);
      }
      expect(failures).toEqual([]);
      // The mutations must reach both sides: some files still decode, most are refused for a reason.
      expect(outcomes.ok ?? 0).toBeGreaterThan(0);
      expect(outcomes.corrupt_file ?? 0).toBeGreaterThan(0);
    });
  }
});

describe("fuzz subset: multipart bodies through the Worker", () => {
  // Several tenants, so the per-tenant rate limit (burst 50) is not what the cases measure.
  const PER_ORG = 40;
  const keys: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < Math.ceil(SUITE_CASES.multipart / PER_ORG); i++) {
      const { apiKey } = await createOrg();
      await enrolWriter(apiKey, FUZZ_SUBJECT, 5, 3);
      keys.push(apiKey);
    }
  }, 60_000);

  it(`${SUITE_CASES.multipart} bodies: documented statuses only, problem documents, no 5xx`, { timeout: 90_000 }, async () => {
    const { cases } = suiteCases(corpus, "multipart");
    expect(cases).toHaveLength(SUITE_CASES.multipart);
    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    for (const [n, c] of cases.entries()) {
      const http = c.http!;
      const headers: Record<string, string> = {
        Authorization: `Bearer ${keys[Math.floor(n / PER_ORG)]}`,
        "Content-Type": http.contentType,
      };
      if (http.route === "checks") headers["Idempotency-Key"] = `fuzz-suite-${c.index}`;
      const path = http.route === "checks" ? "/sig/checks" : "/sig/subjects/fuzz-enrol/references";
      const t = performance.now();
      const res = await exports.default.fetch(BASE + path, { method: http.route === "checks" ? "POST" : "PUT", headers, body: http.body });
      const text = await res.text();
      const ms = performance.now() - t;
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const kind = httpFinding(http, res.status, res.headers.get("Content-Type"));
      if (kind) failures.push(`${describeCase(c)}: ${kind} ${res.status} ${text.slice(0, 200)}`);
      if (ms > SUITE_CASE_BOUND_MS.worker) failures.push(`${describeCase(c)}: ${Math.round(ms)} ms`);
    }
    expect(failures).toEqual([]);
    // Both outcomes occur: accepted checks and enrolments, and refusals of broken framing or documents.
    expect(Object.keys(statuses).some((s) => s.startsWith("2"))).toBe(true);
    expect(statuses[400] ?? 0).toBeGreaterThan(0);
  });
});
