#!/usr/bin/env node
/**
 * Dependency check: the domain, the verification core, storage and the Durable Objects never import
 * src/http, src/routes or Hono (rules in scripts/check-deps-rules.mjs). Prints each violation as
 * `file:line` and exits 1 when there is any.
 *
 *   node scripts/check-deps.mjs [root]     (root defaults to the repository)
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GUARDED_LAYERS, findViolations } from "./check-deps-rules.mjs";

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."));

function* walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of entries) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else yield full;
  }
}

function* sources() {
  for (const layer of GUARDED_LAYERS) {
    for (const full of walk(path.join(root, layer))) {
      const rel = path.relative(root, full).split(path.sep).join("/");
      yield [rel, readFileSync(full, "utf8")];
    }
  }
}

const violations = findViolations(sources());
for (const v of violations) console.error(`${v.file}:${v.line}: ${v.why}`);
if (violations.length > 0) {
  console.error(
    `check:deps: ${violations.length} import(s) break the layering (${GUARDED_LAYERS.join(", ")} may not import src/http, src/routes or hono)`,
  );
  process.exit(1);
}
console.log(`check:deps: ${GUARDED_LAYERS.join(", ")} import nothing from src/http, src/routes or hono`);
