/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { findViolations, importsOf } from "../../scripts/check-deps-rules.mjs";

// The repository's own guarded sources, read at build time by Vite (workerd has no file system).
const tree = import.meta.glob(["../../src/{domain,verify,storage}/**/*.ts", "../../durable-objects/**/*.ts"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** A fixture tree in which every guarded layer breaks the rule once, beside imports that are allowed. */
const fixture: [string, string][] = [
  [
    "src/storage/orgs.ts",
    ['import { and } from "drizzle-orm";', "import {", "  type Org,", "  type Tenant,", '} from "../http/context";', ""].join("\n"),
  ],
  [
    "src/domain/rules.ts",
    [
      '// Once: import { x } from "../http/schemas";',
      '/* import y from "../routes/z"; */',
      'export { thing } from "../routes/checks/schemas";',
    ].join("\n"),
  ],
  [
    "src/verify/steps.ts",
    ['const doc = `import { z } from "hono"`;', 'const re = /"/g;', 'const hono = await import("hono/streaming");'].join("\n"),
  ],
  ["durable-objects/gate.ts", ['import type { Env } from "../src/env";', 'import type { AppEnv } from "../src/http/context";'].join("\n")],
  ["src/domain/sub/deep.ts", 'import { z } from "@hono/zod-openapi";\nimport { y } from "zod";'],
  // Outside the guarded layers: the HTTP layer and services may import anything.
  ["src/http/route.ts", 'import { Hono } from "hono";'],
  ["src/services/checks.ts", 'import { ProblemError } from "../http/problem";'],
  // A sibling whose name only starts like a forbidden directory is not one.
  ["src/storage/https.ts", 'import { a } from "../https-helpers/a";'],
];

describe("dependency check", () => {
  it("reports every forbidden import of the guarded layers with its file and line", () => {
    expect(findViolations(fixture).map((v) => `${v.file}:${v.line} ${v.specifier}`)).toEqual([
      "durable-objects/gate.ts:2 ../src/http/context",
      "src/domain/rules.ts:3 ../routes/checks/schemas",
      "src/domain/sub/deep.ts:1 @hono/zod-openapi",
      "src/storage/orgs.ts:5 ../http/context",
      "src/verify/steps.ts:3 hono/streaming",
    ]);
  });

  it("reads static, type-only, re-exported, side-effect and dynamic imports, and skips comments and text", () => {
    const src = [
      'import "./side-effect";',
      'import type { A } from "./a";',
      "// import { no } from './commented';",
      'export * from "./b";',
      'const s = "import { no } from \\"./string\\"";',
      'await import("./c");',
    ].join("\n");
    expect(importsOf(src)).toEqual([
      { specifier: "./side-effect", line: 1 },
      { specifier: "./a", line: 2 },
      { specifier: "./b", line: 4 },
      { specifier: "./c", line: 6 },
    ]);
  });

  it("passes on this repository's domain, verify, storage and Durable Objects", () => {
    const files = Object.entries(tree).map(([p, text]): [string, string] => [p.replace(/^(\.\.\/)+/, ""), text]);
    // The glob really reached the layers, so an empty result means something.
    expect(files.some(([p]) => p.startsWith("src/domain/"))).toBe(true);
    expect(files.some(([p]) => p.startsWith("src/storage/"))).toBe(true);
    expect(files.some(([p]) => p.startsWith("durable-objects/"))).toBe(true);
    expect(findViolations(files)).toEqual([]);
  });
});
