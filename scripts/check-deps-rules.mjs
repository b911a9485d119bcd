/**
 * The layering rules of the codebase and the import parser that checks them, free of the file system so
 * the same code runs in the CLI (scripts/check-deps.mjs) and in a test inside workerd.
 *
 * Rule: the domain, the verification core, storage and the Durable Objects hold the business rules and
 * must stay usable without the HTTP layer, so they never import src/http, src/routes, or Hono.
 */

/** Directories (relative to the repository root) whose files are checked. */
export const GUARDED_LAYERS = ["src/domain", "src/verify", "src/storage", "durable-objects"];

/** Directories the guarded layers may not import from. */
export const FORBIDDEN_DIRS = ["src/http", "src/routes"];

/** Packages the guarded layers may not import (Hono and its zod-openapi wrapper). */
export const FORBIDDEN_PACKAGES = [/^hono(\/|$)/, /^@hono\//];

/**
 * The source with comments and template-literal text blanked (newlines kept, so offsets keep their
 * line numbers). String literals are kept: they hold the module specifiers.
 */
export function blankComments(text) {
  const out = text.split("");
  const blank = (from, to) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  // The last significant character decides whether a `/` opens a regular expression or divides.
  let prev = "";
  while (i < text.length) {
    const ch = text[i];
    const next = text[i + 1];
    if (ch === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      blank(i, stop);
      i = stop;
      continue;
    }
    if (ch === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
      continue;
    }
    if (ch === '"' || ch === "'") {
      i = skipQuoted(text, i, ch);
      prev = ch;
      continue;
    }
    if (ch === "`") {
      const stop = skipTemplate(text, i);
      blank(i + 1, stop - 1);
      i = stop;
      prev = "`";
      continue;
    }
    if (ch === "/" && (prev === "" || "(,=:[!&|?{};+-*%<>~^".includes(prev))) {
      i = skipRegex(text, i);
      prev = "/";
      continue;
    }
    if (!/\s/.test(ch)) prev = ch;
    i++;
  }
  return out.join("");
}

function skipQuoted(text, start, quote) {
  let i = start + 1;
  while (i < text.length && text[i] !== quote && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

function skipTemplate(text, start) {
  let i = start + 1;
  while (i < text.length && text[i] !== "`") {
    if (text[i] === "\\") i += 2;
    else if (text[i] === "$" && text[i + 1] === "{") {
      // Skip the substitution up to its matching brace (nested templates included).
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        if (text[i] === "`") i = skipTemplate(text, i);
        else if (text[i] === '"' || text[i] === "'") i = skipQuoted(text, i, text[i]);
        else {
          if (text[i] === "{") depth++;
          else if (text[i] === "}") depth--;
          i++;
        }
      }
    } else i++;
  }
  return i + 1;
}

function skipRegex(text, start) {
  let i = start + 1;
  let inClass = false;
  while (i < text.length && text[i] !== "\n") {
    const ch = text[i];
    if (ch === "\\") i += 2;
    else if (ch === "[") (inClass = true), i++;
    else if (ch === "]") (inClass = false), i++;
    else if (ch === "/" && !inClass) return i + 1;
    else i++;
  }
  return i;
}

/** Static imports and re-exports (`import x from`, `import type`, `export * from`), side-effect imports, `import()`. */
const IMPORT_PATTERNS = [
  /(?:^|[;}\n])\s*(?:import|export)\s+(?:type\s+)?[^;'"`]*?\bfrom\s*(["'])([^"'\n]+)\1/g,
  /(?:^|[;}\n])\s*import\s*(["'])([^"'\n]+)\1/g,
  /\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g,
];

/** Every module specifier a source file imports, with the 1-based line it appears on. */
export function importsOf(text) {
  const code = blankComments(text);
  const found = new Map();
  for (const pattern of IMPORT_PATTERNS) {
    for (const m of code.matchAll(pattern)) {
      const specifier = m[2];
      const at = m.index + m[0].lastIndexOf(m[1] + specifier);
      const line = code.slice(0, at).split("\n").length;
      found.set(`${line}:${specifier}`, { specifier, line });
    }
  }
  return [...found.values()].sort((a, b) => a.line - b.line);
}

/** `a/b/../c` -> `a/c` on forward-slash paths relative to the root. */
function normalise(path) {
  const parts = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop();
    else parts.push(p);
  }
  return parts.join("/");
}

function within(path, dir) {
  return path === dir || path.startsWith(`${dir}/`);
}

/** Why an import breaks the rules, or null. `file` is relative to the root, with forward slashes. */
export function ruleBroken(file, specifier) {
  if (specifier.startsWith(".")) {
    const dir = file.split("/").slice(0, -1).join("/");
    const target = normalise(`${dir}/${specifier}`);
    const dirHit = FORBIDDEN_DIRS.find((d) => within(target, d));
    return dirHit ? `imports ${dirHit} (${specifier})` : null;
  }
  return FORBIDDEN_PACKAGES.some((p) => p.test(specifier)) ? `imports the package ${specifier}` : null;
}

/** True when a file (relative path) belongs to a guarded layer and is TypeScript. */
export function isGuarded(file) {
  return /\.(ts|mts|cts)$/.test(file) && !file.endsWith(".d.ts") && GUARDED_LAYERS.some((d) => within(file, d));
}

/**
 * Every violation in a tree given as (relative path, source text) pairs, in file then line order.
 * @param {Iterable<[string, string]>} files
 */
export function findViolations(files) {
  const violations = [];
  for (const [file, text] of files) {
    if (!isGuarded(file)) continue;
    for (const { specifier, line } of importsOf(text)) {
      const why = ruleBroken(file, specifier);
      if (why) violations.push({ file, line, specifier, why });
    }
  }
  return violations.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}
