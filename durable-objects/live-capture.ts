import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";

// PLACEHOLDER: filled in by the work that owns it.
export class LiveCapture extends DurableObject<Env> {}
