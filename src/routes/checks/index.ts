import type { App } from "../../app";
import { registerCreateCheck } from "./create";
import { registerReadChecks } from "./read";

/** POST /sig/checks, GET /sig/checks/{job_id} and the crop image. */
export function registerCheckRoutes(app: App): void {
  registerCreateCheck(app);
  registerReadChecks(app);
}
