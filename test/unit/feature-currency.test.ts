// Which stored features and models the service must extract again after a change of the core's features
// (docs/feature-upgrades.md): both stored shapes of a reference's features, models whose stamp or whose
// references are of another version, and the detail the subject view shows when an upgrade fails.
import { describe, expect, it } from "vitest";
import { liveEngine } from "../../src/services/engine-live";
import { staleReferences } from "../../src/services/feature-upgrade";
import { upgradeFailureDetail } from "../../src/domain/enrolment";
import { FEATURE_VERSION } from "../../src/verify/features";
import type { ReferenceRow } from "../../src/storage/schema/subjects";
import { encodePng, makeWriter, renderSignature } from "../fixtures/generator";

const engine = liveEngine();

async function enrolled(): Promise<{ features: unknown; model: unknown }> {
  const result = await engine.enrolReference(encodePng(renderSignature(makeWriter(310), { variant: 1, height: 200 })));
  if (!result.ok) throw new Error(result.detail);
  const features = JSON.parse(JSON.stringify(result.features));
  const { model } = await engine.buildModel([{ refId: "r1", features }]);
  return { features, model: JSON.parse(JSON.stringify(model)) };
}

function row(refId: string, status: ReferenceRow["status"], features: unknown): ReferenceRow {
  return { refId, status, features: features === null ? null : JSON.stringify(features) } as ReferenceRow;
}

describe("stored features", () => {
  it("are current as enrolment stores them, with or without the variant row around them", async () => {
    const { features } = await enrolled();
    expect(engine.featureVersion).toBe(FEATURE_VERSION);
    expect(engine.featuresCurrent(features)).toBe(true);
    // Rows enrolled before variant rows were stored hold the bare signature features.
    expect(engine.featuresCurrent((features as { signature: unknown }).signature)).toBe(true);
  });

  it("are outdated when of another version, in either shape, or unreadable", async () => {
    const { features } = await enrolled();
    const f = features as { signature: { version: number } };
    const old = { ...f, signature: { ...f.signature, version: FEATURE_VERSION - 1 } };
    expect(engine.featuresCurrent(old)).toBe(false);
    expect(engine.featuresCurrent(old.signature)).toBe(false);
    expect(engine.featuresCurrent(null)).toBe(false);
    expect(engine.featuresCurrent({})).toBe(false);
  });

  it("staleReferences picks the live rows of another version only", async () => {
    const { features } = await enrolled();
    const f = features as { signature: { version: number } };
    const old = { ...f, signature: { ...f.signature, version: FEATURE_VERSION - 1 } };
    const rows = [
      row("current", "enrolled", features),
      row("old", "enrolled", old),
      row("old-rejected", "rejected", old),
      row("queued", "queued", null),
    ];
    rows.push({ ...row("garbled", "enrolled", null), features: "{not json" });
    expect(staleReferences(engine, rows).map((r) => r.refId)).toEqual(["old", "garbled"]);
  });
});

describe("stored models", () => {
  it("are current when stamped and built from features of the current version", async () => {
    const { model } = await enrolled();
    expect(engine.modelCurrent(model)).toBe(true);
  });

  it("are outdated when stamped with another version, or when one of their references is of another version", async () => {
    const { model } = await enrolled();
    const m = model as { featureVersion: number; refs: { features: { version: number } }[] };
    expect(engine.modelCurrent({ ...m, featureVersion: FEATURE_VERSION - 1 })).toBe(false);
    const oldRef = { ...m, refs: [{ ...m.refs[0], features: { ...m.refs[0].features, version: FEATURE_VERSION - 1 } }] };
    expect(engine.modelCurrent(oldRef)).toBe(false);
    expect(engine.modelCurrent(null)).toBe(false);
  });
});

describe("upgrade failures", () => {
  it("say whether the file is gone or no longer yields a signature, and what to do", () => {
    expect(upgradeFailureDetail({ kind: "file_missing" }, 3)).toMatch(/feature version 3.*file is gone\. Upload it again\./);
    expect(upgradeFailureDetail({ kind: "rejected", reason: "no_signature", detail: "no ink found" }, 3)).toMatch(
      /no longer yields a usable signature \(no_signature: no ink found\)\. Upload another\./,
    );
  });
});
