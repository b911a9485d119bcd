// Tests one version's leave-one-dataset-out rates against another's, from the comparisons each run wrote
// with `npm run bench:accuracy -- --scores DIR`: per dataset and number of references, skilled and random
// EER of each, their difference with a 95% interval from a paired bootstrap over writers
// (bench/lib/paired-bootstrap.ts), and how often the second version comes out better.
//
//   npm run bench:compare-scores -- <scores DIR of A> <scores DIR of B> [--replicates K] [--json FILE]
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseOptions } from "./lib/cli";
import { type PairedDifference, pairedEerDifference } from "./lib/paired-bootstrap";
import type { Trial } from "./lib/trial";

const options = parseOptions({
  values: ["--replicates", "--json"],
  usage: "npm run bench:compare-scores -- <scores DIR of A> <scores DIR of B> [--replicates K] [--json FILE]",
});
const fail = (what: string): never => {
  process.stderr.write(`${what}\n`);
  process.exit(2);
};
const [dirA, dirB] = options.positional;
if (!dirA || !dirB) fail("two folders of scores are needed");
const replicates = Number(options.value("--replicates") ?? 2000);
if (!Number.isInteger(replicates) || replicates < 100) fail("--replicates must be a whole number, at least 100");

type Scores = { dataset: string; byN: Record<string, Trial[]> };
const read = (dir: string, file: string): Scores => JSON.parse(readFileSync(join(dir, file), "utf8"));
const pt = (x: number) => (x * 100).toFixed(1);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;

const out: { dataset: string; n: number; skilled: PairedDifference; random: PairedDifference }[] = [];
const files = readdirSync(dirA).filter((f) => f.startsWith("scores-lodo-") && f.endsWith(".json"));
if (files.length === 0) fail(`${dirA} holds no scores-lodo-*.json (npm run bench:accuracy -- --scores DIR writes them)`);
for (const file of files) if (!existsSync(join(dirB, file))) fail(`${dirB} has no ${file}: run both versions on the same datasets`);
for (const file of files.sort()) {
  const a = read(dirA, file);
  const b = read(dirB, file);
  console.log(`\n${a.dataset}: B against A, paired bootstrap over writers (${replicates} replicates)`);
  console.log("   N | skilled EER A -> B  (B - A, 95% interval)   B better | random EER A -> B  (B - A, 95% interval)   B better");
  for (const n of Object.keys(a.byN)) {
    const s = pairedEerDifference(a.byN[n], b.byN[n], "skilled", replicates);
    const r = pairedEerDifference(a.byN[n], b.byN[n], "random", replicates);
    out.push({ dataset: a.dataset, n: Number(n), skilled: s, random: r });
    const cell = (d: PairedDifference) =>
      `${pt(d.a).padStart(5)} -> ${pt(d.b).padStart(5)}  (${signed(d.delta).padStart(5)}, ${signed(d.low)} to ${signed(d.high)})`.padEnd(
        41,
      ) + `${(d.bBetter * 100).toFixed(0).padStart(5)}%`;
    console.log(`${n.padStart(4)} | ${cell(s)} | ${cell(r)}`);
  }
}
const json = options.value("--json");
if (json) writeFileSync(json, JSON.stringify({ a: dirA, b: dirB, replicates, results: out }, null, 1));
