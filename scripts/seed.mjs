// Seeds the local service (called by scripts/start.mjs once `wrangler dev` answers): a demo organisation
// "Demo" in region us with billing active and an API key holding every permission. Idempotent: the key is
// kept in .wrangler/demo-key.txt and reused while it still works against the local state.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { platformClient } from "./platform-client.mjs";

const KEY_FILE = ".wrangler/demo-key.txt";
const ALL_PERMISSIONS = [
  "sig:checks:create",
  "sig:checks:read",
  "sig:subjects:read",
  "sig:references:write",
  "sig:references:delete",
  "sig:settings:manage",
  "org:read",
  "org:children:access",
];

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
  console.log(`
Countersign is running at ${base}
  demo organisation: ${me.org.org_id} (region ${me.org.region})
  demo API key (every permission): ${key}

  curl ${base}/health
  curl -H "Authorization: Bearer ${key}" ${base}/platform/me
  curl -H "Authorization: Bearer ${key}" ${base}/sig/policies

  npm run ops -- --help      (operator commands: organisations, keys, audit log)
`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await seedDemo(process.argv[2] ?? `http://127.0.0.1:${process.env.PORT ?? "8787"}`);
}
