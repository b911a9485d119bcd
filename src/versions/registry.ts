import { CHANGES } from "./changes";
import type { VersionChange, VersionRegistry, VersionStatus } from "./types";

/** The production registry: every dated version, newest first, and the breaking changes between them. */
export const REGISTRY: VersionRegistry = {
  versions: [{ date: "2026-09-27" }],
  changes: CHANGES,
};

export const VERSION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** A version stays supported this long after a newer one replaces it (spec part 9). */
const SUPPORT_MONTHS = 24;

export function latestVersion(registry: VersionRegistry = REGISTRY): string {
  return registry.versions[0].date;
}

function addMonths(date: string, months: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString().slice(0, 10);
}

/** The status of a version at a time, or null when the registry does not know it. */
export function versionStatus(version: string, now: Date = new Date(), registry: VersionRegistry = REGISTRY): VersionStatus | null {
  const i = registry.versions.findIndex((v) => v.date === version);
  if (i < 0) return null;
  if (i === 0) return { status: "current" };
  const deprecatedAt = registry.versions[i - 1].date;
  const sunset = registry.versions[i].sunset ?? addMonths(deprecatedAt, SUPPORT_MONTHS);
  return { status: now.getTime() >= Date.parse(`${sunset}T00:00:00Z`) ? "sunset" : "deprecated", deprecatedAt, sunset };
}

/** Why a requested version cannot be used, or null when it can. */
export function versionProblem(version: string, now: Date = new Date(), registry: VersionRegistry = REGISTRY): string | null {
  if (!VERSION_PATTERN.test(version) || Number.isNaN(Date.parse(`${version}T00:00:00Z`))) {
    return `Service-Version must be a date YYYY-MM-DD; the latest version is ${latestVersion(registry)}.`;
  }
  const status = versionStatus(version, now, registry);
  if (!status) return `Service-Version ${version} is not a known version; the latest version is ${latestVersion(registry)}.`;
  if (status.status === "sunset")
    return `Service-Version ${version} was sunset on ${status.sunset}; the latest version is ${latestVersion(registry)}.`;
  return null;
}

/** The changes a body in the latest shape goes through to reach `version`, newest first. */
export function changesSince(version: string, registry: VersionRegistry, applies: (c: VersionChange) => boolean): VersionChange[] {
  return registry.changes
    .filter((c) => c.version > version && applies(c))
    .sort((a, b) => (a.version < b.version ? 1 : a.version > b.version ? -1 : 0));
}
