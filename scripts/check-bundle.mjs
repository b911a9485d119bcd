// `npm run check:bundle`: bundles the Worker exactly as `wrangler deploy` would (`--dry-run --outdir`, no
// account needed) and fails when the upload, gzipped, passes the budget. The budget keeps us well inside
// the Workers script-size limit and keeps cold starts short; the WASM modules count, source maps do not.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";

const BUDGET_BYTES = Number(process.env.BUNDLE_BUDGET_BYTES ?? 1_500_000);

const outdir = mkdtempSync(path.join(tmpdir(), "countersign-bundle-"));
try {
  const out = execFileSync("node_modules/.bin/wrangler", ["deploy", "--dry-run", "--outdir", outdir, "--config", "wrangler.toml"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  // Wrangler's own figure: it compresses differently, so the budget applies to the larger of the two.
  const total = /Total Upload:.*gzip: ([\d.]+) KiB/m.exec(out);
  if (total) console.log(`wrangler: ${total[0]}`);
  const wranglerGzip = total ? Math.round(Number(total[1]) * 1024) : 0;
  const modules = readdirSync(outdir).filter((f) => !f.endsWith(".map") && f !== "README.md");
  let raw = 0;
  let gzip = 0;
  const rows = modules.map((f) => {
    const bytes = readFileSync(path.join(outdir, f));
    const z = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gzip += z;
    return `  ${f.replace(/^[0-9a-f]{40}-/, "").padEnd(28)} ${kib(bytes.length).padStart(12)} ${kib(z).padStart(12)} gzip`;
  });
  console.log(["bundle (wrangler deploy --dry-run):", ...rows].join("\n"));
  gzip = Math.max(gzip, wranglerGzip);
  const verdict = gzip <= BUDGET_BYTES ? "within" : "OVER";
  console.log(
    `bundle: ${kib(raw)} raw, ${kib(gzip)} gzip (${(gzip / 1e6).toFixed(3)} MB); budget ${(BUDGET_BYTES / 1e6).toFixed(3)} MB: ${verdict}`,
  );
  if (gzip > BUDGET_BYTES) process.exitCode = 1;
} finally {
  rmSync(outdir, { recursive: true, force: true });
}

function kib(n) {
  return `${(n / 1024).toFixed(1)} KiB`;
}
