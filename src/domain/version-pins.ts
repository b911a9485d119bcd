/**
 * Changing an organisation's pinned version (spec part 9, rule 3): it may be upgraded to any supported
 * newer version, and the last upgrade may be rolled back to the version before it within 72 hours.
 * Pure: the registry and the clock are passed in.
 */
import { versionProblem } from "../versions/registry";
import type { VersionRegistry } from "../versions/types";

export const ROLLBACK_WINDOW_MS = 72 * 3600 * 1000;

export interface PinChange {
  from: string;
  to: string;
  kind: "upgrade" | "rollback";
  at: string;
}

export type PinDecision =
  | { kind: "unchanged" }
  | { kind: "upgrade" | "rollback"; from: string; to: string }
  | { refused: "invalid_version" | "not_rollback_target" | "rollback_expired"; message: string };

/**
 * What asking for `target` does, given the current pin and the last change of the pin (if any).
 * Versions are dates, so comparing them as strings orders them.
 */
export function decidePinChange(
  current: string,
  target: string,
  last: PinChange | null,
  now: Date,
  registry: VersionRegistry,
): PinDecision {
  const problem = versionProblem(target, now, registry);
  if (problem) return { refused: "invalid_version", message: problem };
  if (target === current) return { kind: "unchanged" };
  if (target > current) return { kind: "upgrade", from: current, to: target };
  // Older than the pin: only the undoing of the last upgrade, back to exactly where it came from.
  if (last?.kind !== "upgrade" || last.to !== current || last.from !== target) {
    return {
      refused: "not_rollback_target",
      message: `The pin can only be rolled back to the version before its last upgrade${last?.kind === "upgrade" && last.to === current ? ` (${last.from})` : ""}; ${target} is older than the pinned ${current}.`,
    };
  }
  const until = Date.parse(last.at) + ROLLBACK_WINDOW_MS;
  if (now.getTime() >= until) {
    return {
      refused: "rollback_expired",
      message: `The upgrade to ${current} was made on ${last.at}; it could be rolled back within 72 hours, until ${new Date(until).toISOString()}.`,
    };
  }
  return { kind: "rollback", from: current, to: target };
}

/** Until when the current pin can be rolled back, and to what, or null. */
export function rollbackAvailable(current: string, last: PinChange | null, now: Date): { to: string; until: string } | null {
  if (last?.kind !== "upgrade" || last.to !== current) return null;
  const until = Date.parse(last.at) + ROLLBACK_WINDOW_MS;
  return now.getTime() < until ? { to: last.from, until: new Date(until).toISOString() } : null;
}

/** Supported versions newer than `current`, newest first. */
export function upgradeTargets(current: string, now: Date, registry: VersionRegistry): string[] {
  return registry.versions.map((v) => v.date).filter((d) => d > current && versionProblem(d, now, registry) === null);
}
