// The WASM core in Node, compiled from wasm/build/core.wasm on disk (the Worker imports the same file).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createCore, type Core } from "../../src/verify/core";

export function loadNodeCore(): Core {
  const path = fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url));
  return createCore(new WebAssembly.Module(readFileSync(path)));
}
