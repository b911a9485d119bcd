// Seeds the local service (called by scripts/start.mjs once `wrangler dev` answers): a demo organisation
// "Demo" in region us with billing active and an API key holding every permission. Idempotent: the key is
// kept in .wrangler/demo-key.txt and reused while it still works against the local state.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { ALL_PERMISSIONS } from "./permissions.mjs";
import { platformClient } from "./platform-client.mjs";

const KEY_FILE = ".wrangler/demo-key.txt";

async function keyWorks(base, key) {
  const res = await fetch(`${base}/platform/me`, { headers: { Authorization: `Bearer ${key}` } });
  if (!res.ok) return null;
  const me = await res.json();
  return ALL_PERMISSIONS.every((p) => me.permissions.includes(p)) ? me : null;
}

export async function seedDemo(base) {
  let key = existsSync(KEY_FILE) ? readFileSync(KEY_FILE, "utf8").trim() : "";
  let me = key ? await keyWorks(base, key) : null;
  if (!me) {
    const { call } = platformClient(base);
    const org = await call("POST", "/platform/orgs", { name: "Demo", region: "us", billing: "active" });
    const minted = await call("POST", `/platform/orgs/${org.org_id}/keys`, { permissions: ALL_PERMISSIONS, name: "demo" });
    key = minted.key;
    mkdirSync(".wrangler", { recursive: true });
    writeFileSync(KEY_FILE, key + "\n", { mode: 0o600 });
    me = await keyWorks(base, key);
    if (!me) throw new Error("the freshly minted demo key does not authenticate");
  }
  let link = null;
  try {
    link = await demoSessionLink(base, key);
  } catch (err) {
    console.error("minting a demo session link failed:", err.message);
  }
  console.log(`
Countersign is running at ${base}
  demo organisation: ${me.org.org_id} (region ${me.org.region})
  demo API key (every permission): ${key}

  curl ${base}/health
  curl -H "Authorization: Bearer ${key}" ${base}/platform/me
  curl -H "Authorization: Bearer ${key}" ${base}/sig/policies

  npm run ops -- --help      (operator commands: organisations, keys, audit log)
${
  link
    ? `
  Live capture for the demo subject ${DEMO_SUBJECT} (open on this machine; valid 15 minutes, one check):
  ${link}
  npm run ops -- session     (mints another link)
`
    : ""
}`);
}

export const DEMO_SUBJECT = "alice";

/** The demo key written by seedDemo, for commands that act as the demo organisation. */
export function demoKey() {
  return existsSync(KEY_FILE) ? readFileSync(KEY_FILE, "utf8").trim() : null;
}

/**
 * A capture page link (session token in the fragment) for `subject`, enrolling the demo subject first
 * from demo-images/ (written by `npm run demo:images`) when it has no references yet.
 */
export async function demoSessionLink(base, key, subject = DEMO_SUBJECT) {
  const auth = { Authorization: `Bearer ${key}` };
  const existing = await fetch(`${base}/sig/subjects/${subject}`, { headers: auth });
  if (existing.status === 404 && subject === DEMO_SUBJECT) {
    if (!existsSync("demo-images/alice-1.png") || !existsSync("demo-images/form-scan.png"))
      execFileSync("node", ["--import", "tsx", "scripts/demo-images.ts"], { stdio: "ignore" });
    const form = new FormData();
    for (let i = 1; i <= 3; i++)
      form.append(`alice-${i}`, new Blob([readFileSync(`demo-images/alice-${i}.png`)], { type: "image/png" }), `alice-${i}.png`);
    const enrolled = await fetch(`${base}/sig/subjects/${subject}/references`, { method: "PUT", headers: auth, body: form });
    if (!enrolled.ok) throw new Error(`enrolling ${subject}: ${enrolled.status} ${await enrolled.text()}`);
  }
  const res = await fetch(`${base}/sig/sessions`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify({ subject_reference: subject }),
  });
  if (!res.ok) throw new Error(`POST /sig/sessions: ${res.status} ${await res.text()}`);
  return (await res.json()).capture_url;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await seedDemo(process.argv[2] ?? `http://127.0.0.1:${process.env.PORT ?? "8787"}`);
}
