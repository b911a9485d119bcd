/**
 * The WASM core in workerd: the Worker bundles wasm/build/core.wasm as a WebAssembly.Module. One Core per
 * isolate, created on first use.
 */
import mod from "../../wasm/build/core.wasm";
import { createCore, type Core } from "./core";

let core: Core | undefined;

export function getCore(): Core {
  core ??= createCore(mod);
  return core;
}
