// Shipped parameter files are written with numbers to 6 significant digits, then through Biome's
// formatter, as the tree is formatted: a retrain that changes nothing leaves no diff.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function writeParams(path: string, params: unknown): void {
  const round = (v: number) => Number(v.toPrecision(6));
  writeFileSync(path, `${JSON.stringify(params, (_, v) => (typeof v === "number" ? round(v) : v), 1)}\n`);
  const biome = fileURLToPath(new URL("../../node_modules/.bin/biome", import.meta.url));
  execFileSync(biome, ["format", "--write", path], { stdio: "ignore" });
}
