/**
 * A breaking change, Stripe style: the code always produces the latest shape, and each change knows
 * how to turn that shape back into the one before it. A response in version V applies, newest first,
 * every change introduced after V.
 */
export interface VersionChange {
  /** The version (YYYY-MM-DD) that introduced the change. */
  version: string;
  /** The changelog line. */
  description: string;
  /** Routes whose response bodies it rewrites, as `METHOD /path/:param` (Hono route paths). */
  routes?: string[];
  /** Resource types it rewrites wherever they are rendered on their own (webhook payloads). */
  resources?: string[];
  /** Rewrites a body in the shape of `version` into the shape of the version before it. */
  down(body: unknown): unknown;
}

export interface DatedVersion {
  /** YYYY-MM-DD */
  date: string;
  /** Overrides the sunset date (default: 24 months after the next version replaced it). */
  sunset?: string;
}

export interface VersionRegistry {
  /** Every version ever released, newest first. The first is the current one. */
  versions: DatedVersion[];
  changes: VersionChange[];
}

export type VersionStatus =
  | { status: "current" }
  | { status: "deprecated"; deprecatedAt: string; sunset: string }
  | { status: "sunset"; deprecatedAt: string; sunset: string };
