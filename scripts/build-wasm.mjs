// Compiles each AssemblyScript entry in wasm/ (every wasm/*.ts; shared code lives in wasm/lib/)
// to wasm/build/<name>.wasm with SIMD. The Worker imports these files as WebAssembly.Module.
// Each module's linear memory is capped at MAX_MEMORY_PAGES (64 KiB each): the host caps what it copies in
// (src/verify/core.ts: at most 4 MP, which peaks at about 8 MiB), so reaching the cap is a bug that traps
// (and becomes a typed error) instead of growing the isolate's memory for good.
const MAX_MEMORY_PAGES = 512; // 32 MiB
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const wasmDir = join(root, "wasm");
const outDir = join(wasmDir, "build");
mkdirSync(outDir, { recursive: true });

const asc = join(root, "node_modules", ".bin", "asc");
const entries = readdirSync(wasmDir).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
for (const entry of entries) {
  const name = entry.replace(/\.ts$/, "");
  const src = join(wasmDir, entry);
  const out = join(outDir, `${name}.wasm`);
  // Skip when the output is newer than every source file (entries and wasm/lib).
  const sources = [src, ...listLib(), fileURLToPath(import.meta.url)];
  if (existsSync(out) && sources.every((s) => statSync(s).mtimeMs <= statSync(out).mtimeMs) && !process.argv.includes("--force")) {
    continue;
  }
  execFileSync(
    asc,
    [
      src,
      "-o",
      out,
      "--optimize",
      "-O3",
      "--enable",
      "simd",
      "--runtime",
      "stub",
      "--exportRuntime",
      "--noAssert",
      "--use",
      "abort=",
      "--maximumMemory",
      String(MAX_MEMORY_PAGES),
    ],
    { stdio: "inherit", cwd: root },
  );
  console.log(`built wasm/build/${name}.wasm`);
}

function listLib() {
  const lib = join(wasmDir, "lib");
  if (!existsSync(lib)) return [];
  return readdirSync(lib)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(lib, f));
}
