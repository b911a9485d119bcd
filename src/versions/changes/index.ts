import type { VersionChange } from "../types";

/**
 * Breaking changes after the first public version, one module each (e.g. `./2027-03-01-rename-x.ts`),
 * listed here. None yet: 2026-09-27 is the first version.
 */
export const CHANGES: VersionChange[] = [];
