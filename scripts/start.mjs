// `npm start`: applies the D1 migrations to the local state, makes sure an operator secret exists,
// runs `wrangler dev`, and seeds a demo organisation once the service answers.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

const wrangler = "node_modules/.bin/wrangler";
const port = process.env.PORT ?? "8787";

for (const db of ["countersign-directory", "countersign-us", "countersign-eu"]) {
  execFileSync(wrangler, ["d1", "migrations", "apply", db, "--local"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, CI: "true" },
  });
}

if (!existsSync(".dev.vars") || !/OPERATOR_TOKEN=/.test(readFileSync(".dev.vars", "utf8"))) {
  writeFileSync(".dev.vars", `OPERATOR_TOKEN=op_${randomBytes(24).toString("hex")}\n`, { flag: "a" });
}

if (!/BUCKET_SECRET_KEY=/.test(readFileSync(".dev.vars", "utf8"))) {
  // Encrypts bucket key secrets at rest (the local S3 endpoint must recover them to verify signatures).
  writeFileSync(".dev.vars", `BUCKET_SECRET_KEY=bk_${randomBytes(24).toString("hex")}\n`, { flag: "a" });
}

// The addresses the service writes into what it sends (status_url in drop summaries, webhook payloads)
// follow the port it runs on; wrangler.toml's API_BASE_URL names the default one.
const dev = spawn(wrangler, ["dev", "--port", port, "--ip", "127.0.0.1", "--var", `API_BASE_URL:http://127.0.0.1:${port}`], {
  stdio: "inherit",
});
dev.on("exit", (code) => process.exit(code ?? 0));
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => dev.kill(sig));

const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 120; i++) {
  try {
    const res = await fetch(`${base}/health`);
    if (res.ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 500));
}
try {
  const { seedDemo } = await import("./seed.mjs");
  await seedDemo(base);
} catch (err) {
  console.error("seeding the demo organisation failed:", err);
}
