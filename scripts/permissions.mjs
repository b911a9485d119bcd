// Every permission a key may hold, for the scripts that mint "everything" keys (seed.mjs's demo key,
// `npm run ops -- keys mint --all`). Plain JavaScript because the scripts run on Node without a
// TypeScript loader; src/domain/tenancy.ts (PERMISSIONS) is the authority, and
// test/node/script-permissions.test.mjs fails when this list and that one differ.
export const ALL_PERMISSIONS = [
  "sig:checks:create",
  "sig:checks:read",
  "sig:subjects:read",
  "sig:references:write",
  "sig:references:delete",
  "sig:settings:manage",
  "org:read",
  "org:children:access",
  "archive:webhooks:manage",
];
