import { buildSeeds } from "./seeds/index";
import { makeCase } from "./core/cases";
const c = await buildSeeds(); let n = 0;
const t = performance.now();
for (let i = 0; i < Number(process.argv[2]); i++) { try { const k = makeCase(c, 1, i, (process.argv[3] ?? "multipart").split(",") as any); n += (k.http?.body ?? k.bytes).length; } catch (e) { console.log(i, e); break; } }
console.log("ok", n, performance.now() - t);
