// Command-line options of the benches: one parser, so that a mistyped or unknown option stops the run with
// the usage instead of starting a long run with the default (a full robustness suite takes 16 minutes).

export interface Options {
  /** `--name value` */
  value(name: string): string | undefined;
  /** `--name` alone */
  flag(name: string): boolean;
  /** Arguments that are neither an option nor an option's value, in order. */
  positional: string[];
}

/**
 * Reads process.argv against the options a bench knows: `values` take the next argument, `flags` stand
 * alone. `--help` or `-h` prints `usage` and exits 0; an unknown option, or a value option without its
 * value, prints what is wrong and the usage to stderr and exits 2.
 */
export function parseOptions(spec: { values: string[]; flags?: string[]; usage: string }, argv = process.argv.slice(2)): Options {
  const flags = spec.flags ?? [];
  const fail = (what: string): never => {
    process.stderr.write(`${what}\n\n${spec.usage}\n`);
    process.exit(2);
  };
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${spec.usage}\n`);
    process.exit(0);
  }
  const values = new Map<string, string>();
  const set = new Set<string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("-")) positional.push(a);
    else if (spec.values.includes(a)) {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("--")) fail(`${a} needs a value`);
      values.set(a, v);
      i++;
    } else if (flags.includes(a)) set.add(a);
    else fail(`unknown option ${a}`);
  }
  return { value: (name) => values.get(name), flag: (name) => set.has(name), positional };
}
