// Worker-thread entry: Node 20 cannot start a thread on a .ts file, so register tsx here first.
import { register } from "tsx/esm/api";

register();
await import("./thread.ts");
