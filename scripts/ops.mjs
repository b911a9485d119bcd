// `npm run ops -- <command>`: the operator's platform routes for local use. See --help.
import { parseArgs } from "node:util";
import { ALL_PERMISSIONS as ALL } from "./permissions.mjs";
import { platformClient } from "./platform-client.mjs";
import { DEMO_SUBJECT, demoKey, demoSessionLink } from "./seed.mjs";

const HELP = `Usage: npm run ops -- <command> [options]

Organisations
  orgs create --name NAME [--region us|eu] [--parent ORG_ID] [--billing active|inactive|canceled|parent]
              [--version YYYY-MM-DD] [--learning on|off] [--allow-host HOST]... [--allow-bucket BUCKET]...
              [--quota N] [--inbox-ttl SECONDS]
  orgs show ORG_ID
  orgs suspend ORG_ID
  orgs unsuspend ORG_ID
  orgs billing ORG_ID active|inactive|canceled|parent
  orgs move ORG_ID us|eu
API keys
  keys mint ORG_ID (--all | --permissions p1,p2,...) [--name NAME] [--expires RFC3339]
  keys list ORG_ID
  keys revoke ORG_ID KEY_ID
Audit log
  audit ORG_ID [--limit N] [--cursor CURSOR]
Live capture
  session [SUBJECT] [--key API_KEY]
              mints a session and prints its capture page link (default: the demo subject, enrolled from
              demo-images/ if needed, with the demo key that \`npm start\` wrote)

Options
  --base URL    the service (default $COUNTERSIGN_URL or http://127.0.0.1:8787)
  --help        this text
The operator token is read from $OPERATOR_TOKEN or .dev.vars.
Permissions: ${ALL.join(", ")}`;

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    help: { type: "boolean", short: "h" },
    base: { type: "string" },
    name: { type: "string" },
    region: { type: "string" },
    parent: { type: "string" },
    billing: { type: "string" },
    version: { type: "string" },
    learning: { type: "string" },
    "allow-host": { type: "string", multiple: true },
    "allow-bucket": { type: "string", multiple: true },
    quota: { type: "string" },
    "inbox-ttl": { type: "string" },
    all: { type: "boolean" },
    permissions: { type: "string" },
    expires: { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    key: { type: "string" },
  },
});

function usage(message) {
  if (message) console.error(`error: ${message}\n`);
  console.log(HELP);
  process.exit(message ? 2 : 0);
}

function need(value, what) {
  if (!value) usage(`missing ${what}`);
  return value;
}

if (o.help || positionals.length === 0) usage();
const base = (o.base ?? process.env.COUNTERSIGN_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const [group, action, ...args] = positionals;
const print = (x) => console.log(JSON.stringify(x, null, 2));

try {
  const { call } = platformClient(base);
  const key = `${group} ${group === "audit" || group === "session" ? "" : (action ?? "")}`.trim();
  switch (key) {
    case "orgs create":
      print(
        await call("POST", "/platform/orgs", {
          name: need(o.name, "--name"),
          region: o.region ?? "us",
          parent_id: o.parent ?? null,
          ...(o.billing ? { billing: o.billing } : {}),
          ...(o.version ? { pinned_version: o.version } : {}),
          ...(o.learning ? { learning: o.learning === "on" } : {}),
          allow_hosts: o["allow-host"] ?? [],
          allow_buckets: o["allow-bucket"] ?? [],
          ...(o.quota ? { monthly_quota: Number(o.quota) } : {}),
          ...(o["inbox-ttl"] ? { inbox_ttl: Number(o["inbox-ttl"]) } : {}),
        }),
      );
      break;
    case "orgs show":
      print(await call("GET", `/platform/orgs/${need(args[0], "ORG_ID")}`));
      break;
    case "orgs suspend":
    case "orgs unsuspend":
      print(await call("POST", `/platform/orgs/${need(args[0], "ORG_ID")}/${action}`));
      break;
    case "orgs billing":
      print(await call("PUT", `/platform/orgs/${need(args[0], "ORG_ID")}/billing`, { billing: need(args[1], "billing state") }));
      break;
    case "orgs move":
      print(await call("POST", `/platform/orgs/${need(args[0], "ORG_ID")}/move`, { region: need(args[1], "region") }));
      break;
    case "keys mint": {
      const permissions = o.all
        ? ALL
        : need(o.permissions, "--permissions or --all")
            .split(",")
            .map((p) => p.trim())
            .filter(Boolean);
      const minted = await call("POST", `/platform/orgs/${need(args[0], "ORG_ID")}/keys`, {
        permissions,
        ...(o.name ? { name: o.name } : {}),
        ...(o.expires ? { expires_at: o.expires } : {}),
      });
      print(minted);
      console.error("\nThe key is shown only this once.");
      break;
    }
    case "keys list":
      print(await call("GET", `/platform/orgs/${need(args[0], "ORG_ID")}/keys`));
      break;
    case "keys revoke":
      await call("DELETE", `/platform/orgs/${need(args[0], "ORG_ID")}/keys/${need(args[1], "KEY_ID")}`);
      console.log("revoked");
      break;
    case "audit": {
      const q = new URLSearchParams();
      if (o.limit) q.set("limit", o.limit);
      if (o.cursor) q.set("cursor", o.cursor);
      print(await call("GET", `/platform/orgs/${need(action, "ORG_ID")}/audit${q.size ? `?${q}` : ""}`));
      break;
    }
    case "session": {
      const apiKey = o.key ?? demoKey();
      if (!apiKey) usage("no --key given and no demo key yet (run npm start once)");
      console.log(await demoSessionLink(base, apiKey, action ?? DEMO_SUBJECT));
      break;
    }
    default:
      usage(`unknown command: ${positionals.join(" ")}`);
  }
} catch (err) {
  console.error(err.message);
  process.exit(1);
}
