import { describe, expect, it } from "vitest";
import { readDropKey } from "../../src/domain/drop";

const ORG = "org_01M8J2Z06VG39PJ73F1ETGM39P";

describe("readDropKey", () => {
  it("takes a file in an inbox folder as one check of that subject", () => {
    expect(readDropKey(`orgs/${ORG}/drops/inbox/alice/scan.png`)).toMatchObject({
      kind: "single",
      subjectReference: "alice",
      name: "scan.png",
    });
  });

  it("refuses an inbox file whose name starts with a dot, as a manifest's file is refused", () => {
    const key = readDropKey(`orgs/${ORG}/drops/inbox/alice/.hidden.png`);
    expect(key).toMatchObject({ kind: "unsupported" });
    expect(key && "reason" in key ? key.reason : "").toMatch(/starts with "\."/);
  });

  it("leaves the service's own summaries alone", () => {
    expect(readDropKey(`orgs/${ORG}/drops/inbox/alice/.hidden.png.summary.json`)).toEqual({ kind: "output" });
  });
});
