// Types of check-deps-rules.mjs for the TypeScript test that exercises it.
export declare const GUARDED_LAYERS: string[];
export declare const FORBIDDEN_DIRS: string[];
export declare const FORBIDDEN_PACKAGES: RegExp[];
export declare function blankComments(text: string): string;
export declare function importsOf(text: string): { specifier: string; line: number }[];
export declare function ruleBroken(file: string, specifier: string): string | null;
export declare function isGuarded(file: string): boolean;
export declare function findViolations(files: Iterable<[string, string]>): { file: string; line: number; specifier: string; why: string }[];
