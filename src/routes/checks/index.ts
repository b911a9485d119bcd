import type { App } from "../../app";
import { registerCreateCheck } from "./create";
import { registerListChecks } from "./list";
import { registerReadChecks } from "./read";

/** GET and POST /sig/checks, GET /sig/checks/{job_id} and the crop image. */
export function registerCheckRoutes(app: App): void {
  registerListChecks(app);
  registerCreateCheck(app);
  registerReadChecks(app);
}
