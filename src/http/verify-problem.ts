import type { VerifyError } from "../verify/types";
import { ProblemError } from "./problem";

/**
 * The one mapping of a file the verification core cannot read to its problem: 415 for a format we do
 * not take, 413 for a file over the size bound, else 422 naming the core's reason. `field` names the
 * request member the file came from; `what` is how the message calls it ("document" or "file") and
 * `role` who must be PNG, JPEG, TIFF or PDF ("Documents", "References").
 */
export function unreadableInput(err: VerifyError, field: string, what: string, role: string): ProblemError {
  const errors = [{ field, message: err.message }];
  if (err.code === "unsupported_format") {
    return new ProblemError("unsupported_media_type", `${field}: ${err.message}. ${role} must be PNG, JPEG, TIFF or PDF.`, {
      extensions: { errors },
    });
  }
  if (err.code === "too_large") return new ProblemError("too_large", `${field}: ${err.message}.`, { extensions: { errors } });
  return new ProblemError("unprocessable", `${field}: the ${what} cannot be read (${err.code}: ${err.message}).`, {
    extensions: { reason: err.code, errors },
  });
}
