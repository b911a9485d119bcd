import type { Env } from "../src/env";
import type { Job } from "./job";

/** The Job object of a check job: one per organisation and job id. */
export function jobObject(env: Pick<Env, "JOB">, orgId: string, jobId: string): DurableObjectStub<Job> {
  return env.JOB.get(env.JOB.idFromName(`${orgId}/${jobId}`));
}
