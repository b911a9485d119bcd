/**
 * Upgrading and rolling back an organisation's pinned version (spec part 9 rule 3). Webhooks follow
 * the pin: every event emitted after a change is rendered in the new version.
 */
import type { Env } from "../env";
import type { Org, RegionStore } from "../domain/tenancy";
import { newId } from "../domain/ids";
import { ProblemError, invalidField } from "../http/problem";
import { decidePinChange, rollbackAvailable, upgradeTargets } from "../domain/version-pins";
import { REGISTRY, latestVersion } from "../versions/registry";
import type { VersionRegistry } from "../versions/types";
import { auditStatement } from "../storage/audit";
import { directory } from "../storage/directory";
import { lastPinChange, pinChangeStatement } from "../storage/version-pins";

export interface PinDeps {
  env: Env;
  org: Org;
  store: RegionStore;
  registry?: VersionRegistry;
  now?: () => Date;
}

export interface PinState {
  pinned_version: string;
  latest_version: string;
  upgrades: string[];
  rollback: { to: string; until: string } | null;
  last_change: { from: string; to: string; kind: "upgrade" | "rollback"; at: string } | null;
}

export async function pinState(deps: PinDeps, pinned = deps.org.pinnedVersion): Promise<PinState> {
  const registry = deps.registry ?? REGISTRY;
  const now = deps.now?.() ?? new Date();
  const last = await lastPinChange(deps.store.db, deps.org.id);
  return {
    pinned_version: pinned,
    latest_version: latestVersion(registry),
    upgrades: upgradeTargets(pinned, now, registry),
    rollback: rollbackAvailable(pinned, last, now),
    last_change: last,
  };
}

/** Sets the pin to `target`: an upgrade, the rollback of the last upgrade within 72 h, or no change. */
export async function changePin(
  deps: PinDeps,
  target: string,
  actor: string,
  requestId?: string,
): Promise<{ state: PinState; changed: boolean }> {
  const registry = deps.registry ?? REGISTRY;
  const now = deps.now?.() ?? new Date();
  const current = deps.org.pinnedVersion;
  const last = await lastPinChange(deps.store.db, deps.org.id);
  const decision = decidePinChange(current, target, last, now, registry);
  if ("refused" in decision) {
    if (decision.refused === "invalid_version") throw invalidField("body.version", decision.message);
    throw new ProblemError("conflict", decision.message, { extensions: { reason: decision.refused } });
  }
  if (decision.kind === "unchanged") return { state: await pinState(deps, current), changed: false };
  const at = now.toISOString();
  await directory(deps.env.DIRECTORY).setPinnedVersion(deps.org.id, target);
  await deps.store.db.batch([
    pinChangeStatement(deps.store.db, {
      orgId: deps.org.id,
      changeId: newId("pin"),
      from: current,
      to: target,
      kind: decision.kind,
      actor,
      at,
    }),
    auditStatement(deps.store.db, {
      orgId: deps.org.id,
      actor,
      action: decision.kind === "upgrade" ? "org.version_upgrade" : "org.version_rollback",
      target: deps.org.id,
      detail: { from: current, to: target },
      requestId,
    }),
  ]);
  return { state: await pinState({ ...deps, org: { ...deps.org, pinnedVersion: target } }, target), changed: true };
}
