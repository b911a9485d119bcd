/** Collects the run's results: counts, findings (written as replayable files), slowest cases, memory. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { mutationFamily } from "../core/cases";
import type { FuzzCase } from "../core/types";

export type FindingKind =
  | "untyped_error"
  | "hang"
  | "over_time_budget"
  | "over_memory_budget"
  | "memory_blowup"
  | "thread_crash"
  | "5xx"
  | "undocumented_status"
  | "not_problem_json"
  | "refused_well_formed"
  | "service_stalled"
  | "connection_failed";

export interface Finding {
  kind: FindingKind;
  lane: "decode" | "worker";
  index: number;
  format: string;
  seed: string;
  family: string;
  mutations: string[];
  detail: string;
  ms: number;
  memMB?: number;
  file: string;
}

interface Slow {
  ms: number;
  index: number;
  format: string;
  seed: string;
  mutations: string[];
  detail: string;
}

const EXT: Record<string, string> = { png: "png", jpeg: "jpg", tiff: "tif", pdf: "pdf", multipart: "multipart" };

export class Report {
  started = Date.now();
  cases = 0;
  byFormat: Record<
    string,
    { cases: number; ok: number; typed: Record<string, number>; statuses: Record<string, number>; findings: number }
  > = {};
  findings: Finding[] = [];
  slowest: Record<"decode" | "worker", Slow | null> = { decode: null, worker: null };
  maxCaseMemMB = 0;
  maxCaseMem: Slow | null = null;

  constructor(
    private outDir: string,
    private runSeed: number,
  ) {}

  #fmt(f: string) {
    return (this.byFormat[f] ??= { cases: 0, ok: 0, typed: {}, statuses: {}, findings: 0 });
  }

  record(
    c: FuzzCase,
    lane: "decode" | "worker",
    ms: number,
    result: { ok?: boolean; typed?: string; status?: number | string },
    memBytes = 0,
  ): void {
    this.cases++;
    const f = this.#fmt(c.format);
    f.cases++;
    if (result.ok) f.ok++;
    if (result.typed) f.typed[result.typed] = (f.typed[result.typed] ?? 0) + 1;
    if (result.status !== undefined) f.statuses[result.status] = (f.statuses[result.status] ?? 0) + 1;
    const slow = this.slowest[lane];
    const entry = {
      ms,
      index: c.index,
      format: c.format,
      seed: c.seed,
      mutations: c.mutations,
      detail: String(result.typed ?? result.status ?? "ok"),
    };
    if (!slow || ms > slow.ms) this.slowest[lane] = entry;
    const mb = memBytes / 2 ** 20;
    if (mb > this.maxCaseMemMB) {
      this.maxCaseMemMB = mb;
      this.maxCaseMem = { ...entry, detail: `${mb.toFixed(1)} MB` };
    }
  }

  /** Files the finding and writes its case (bytes plus a JSON sidecar) for --replay. */
  find(c: FuzzCase, lane: "decode" | "worker", kind: FindingKind, detail: string, ms: number, memBytes?: number): Finding {
    mkdirSync(this.outDir, { recursive: true });
    const base = path.join(this.outDir, `${kind}-${c.format}-s${this.runSeed}-i${c.index}`);
    const file = `${base}.${EXT[c.format]}`;
    writeFileSync(file, c.http ? c.http.body : c.bytes);
    const finding: Finding = {
      kind,
      lane,
      index: c.index,
      format: c.format,
      seed: c.seed,
      family: mutationFamily(c),
      mutations: c.mutations,
      detail,
      ms: Math.round(ms),
      memMB: memBytes === undefined ? undefined : Math.round(memBytes / 2 ** 20),
      file,
    };
    const sidecar = {
      ...finding,
      runSeed: this.runSeed,
      http: c.http ? { route: c.http.route, contentType: c.http.contentType, expect: c.http.expect } : undefined,
    };
    writeFileSync(`${file}.json`, JSON.stringify(sidecar, null, 2));
    if (c.http) writeFileSync(`${base}.document.${EXT[c.seed.split(":")[1]?.split("/")[0] ?? "pdf"] ?? "bin"}`, c.bytes);
    this.findings.push(finding);
    this.#fmt(c.format).findings++;
    return finding;
  }

  /** Findings grouped by kind, format and mutation family, with the first case of each as its example. */
  groups(): { kind: string; format: string; family: string; count: number; example: Finding }[] {
    const m = new Map<string, { kind: string; format: string; family: string; count: number; example: Finding }>();
    for (const f of this.findings) {
      // Framing findings are filed under the multipart edit; the rest under the document's seed and edit.
      const framing =
        f.lane === "worker" &&
        ["refused_well_formed", "5xx", "undocumented_status", "not_problem_json", "connection_failed"].includes(f.kind);
      const mp = f.mutations.find((x) => x.startsWith("multipart:"))?.replace(/\(.*$/, "") ?? "";
      const family = framing ? mp : `${f.seed} ${f.family}`;
      const key = `${f.kind}|${f.format}|${family}`;
      const g = m.get(key);
      if (g) g.count++;
      else m.set(key, { kind: f.kind, format: f.format, family, count: 1, example: f });
    }
    return [...m.values()].sort((a, b) => b.count - a.count);
  }

  summary(extra: Record<string, unknown>): Record<string, unknown> {
    const byKind: Record<string, number> = {};
    for (const f of this.findings) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
    return {
      runSeed: this.runSeed,
      cases: this.cases,
      seconds: Math.round((Date.now() - this.started) / 100) / 10,
      findings: this.findings.length,
      findingsByKind: byKind,
      byFormat: this.byFormat,
      slowest: this.slowest,
      largestCaseMemory: this.maxCaseMem,
      groups: this.groups().map((g) => ({
        kind: g.kind,
        format: g.format,
        family: g.family,
        count: g.count,
        example: { file: g.example.file, mutations: g.example.mutations, detail: g.example.detail, ms: g.example.ms },
      })),
      ...extra,
    };
  }
}
