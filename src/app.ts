import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "./http/context";
import { configOf } from "./config";
import { ProblemError, fieldName, isProblemError, invalidField, renderProblem } from "./http/problem";
import "./http/zod-messages";
import { bodyLimits } from "./http/body";
import { registerOpenApi } from "./http/openapi";
import { registerApiReference } from "./http/api-reference";
import { requestId } from "./http/request-id";
import { accessLog } from "./http/access-log";
import { logError } from "./util/log";
import { versioning } from "./http/versioning";
import { registerHealthRoutes } from "./routes/health";
import { registerPlatformRoutes } from "./routes/platform";
import { registerPolicyRoutes } from "./routes/policies";
import { registerCheckRoutes } from "./routes/checks";
import { registerUsageRoutes } from "./routes/usage";
import { registerReferenceRoutes } from "./routes/subjects/references";
import { registerSubjectRoutes } from "./routes/subjects/subjects";
import { registerWebhookRoutes } from "./routes/webhooks";
import { registerArchiveWebhookRoutes } from "./routes/archive-webhooks";
import { registerWebhookDocs } from "./routes/webhook-docs";
import { registerSessionRoutes } from "./routes/sessions";
import { registerLiveRoutes } from "./routes/live";
import { registerTemplateRoutes } from "./routes/templates";
import { registerBucketKeyRoutes } from "./routes/bucket-keys";
import { registerReviewRoutes } from "./routes/checks/review";
import { registerUnlearnRoute } from "./routes/subjects/unlearn";
import { registerPages } from "./routes/pages";

export type App = OpenAPIHono<AppEnv>;

/**
 * The one app factory: middleware chain, route modules, error handler and OpenAPI document.
 * Tests reach the same app through the Worker's fetch.
 */
export function createApp(): App {
  const app = new OpenAPIHono<AppEnv>({
    // zod validation failures become problem documents that name the field. A malformed path id
    // names nothing, so it is a 404 (spec 2.1).
    defaultHook: (result, c) => {
      if (result.success) return;
      const target = (result as { target?: string }).target;
      if (target === "param") {
        throw new ProblemError("not_found", "The resource does not exist.");
      }
      const issue = result.error.issues[0];
      if (target === "query") throw invalidField(fieldName("query", ...issue.path), issue.message);
      // A header is named by itself, as the middleware that reads headers name them.
      if (target === "header" && issue.path.length > 0) throw invalidField(String(issue.path[0]), issue.message);
      throw invalidField(fieldName("body", ...issue.path), issue.message);
    },
  });

  app.use("*", requestId());
  app.use("*", accessLog());
  app.use("*", versioning());
  app.use("*", bodyLimits());

  registerHealthRoutes(app);
  registerPlatformRoutes(app);
  registerPolicyRoutes(app);
  registerCheckRoutes(app);
  registerUsageRoutes(app);
  registerSubjectRoutes(app);
  registerReferenceRoutes(app);
  registerWebhookRoutes(app);
  registerArchiveWebhookRoutes(app);
  registerWebhookDocs(app);
  registerSessionRoutes(app);
  registerLiveRoutes(app);
  registerTemplateRoutes(app);
  registerBucketKeyRoutes(app);
  registerReviewRoutes(app);
  registerUnlearnRoute(app);
  registerPages(app);

  registerOpenApi(app);
  registerApiReference(app);

  app.notFound((c) =>
    renderProblem(
      new ProblemError("not_found", `No route ${c.req.method} ${new URL(c.req.url).pathname}.`),
      configOf(c.env).docsUrl,
      c.get("requestId"),
    ),
  );

  app.onError((err, c) => {
    const problem = isProblemError(err) ? err : fromFrameworkError(err);
    // The problem document names the request id as the reference; this line is what it refers to.
    if (problem.status >= 500 && !isProblemError(err)) logError("unhandled error", err, { request_id: c.get("requestId") });
    const res = renderProblem(problem, configOf(c.env).docsUrl, c.get("requestId"));
    // Headers set by earlier middleware (X-Request-Id, Service-Version) are re-applied by them after next().
    return res;
  });

  return app;
}

/**
 * Hono's own validators and helpers throw HTTPException (e.g. 400 for malformed JSON): those are the
 * client's mistakes and keep their status; anything else is an internal error.
 */
function fromFrameworkError(err: unknown): ProblemError {
  if (err instanceof HTTPException && err.status < 500) {
    if (err.status === 400) return invalidField("body", err.message || "is malformed");
    if (err.status === 413) return new ProblemError("too_large", err.message || "The body is too large.");
    if (err.status === 415) return new ProblemError("unsupported_media_type", err.message || "Unsupported media type.");
    return new ProblemError("invalid_request", err.message || "The request is invalid.", { status: err.status });
  }
  return new ProblemError("internal_error", "An internal error occurred. It has been logged with this request's id.");
}
