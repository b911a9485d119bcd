import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS } from "../../scripts/permissions.mjs";
import { PERMISSIONS } from "../../src/domain/tenancy.ts";

// The demo key (`npm start`) and `npm run ops -- keys mint --all` promise every permission. The scripts
// run on plain Node, so they keep a JavaScript copy of the list; this keeps it equal to the Worker's.
describe("the scripts' list of every permission", () => {
  it("is exactly the Worker's permission list", () => {
    expect([...ALL_PERMISSIONS].sort()).toEqual([...PERMISSIONS].sort());
    expect(new Set(ALL_PERMISSIONS).size).toBe(ALL_PERMISSIONS.length);
  });

  it("is the one list seed.mjs and ops.mjs mint from (neither keeps a copy of its own)", () => {
    for (const script of ["scripts/seed.mjs", "scripts/ops.mjs"]) {
      const source = readFileSync(script, "utf8");
      expect(source).toMatch(/from "\.\/permissions\.mjs"/);
      for (const permission of PERMISSIONS) expect(source, `${script} names ${permission}`).not.toContain(`"${permission}"`);
    }
  });
});
