/**
 * The remote-job routes (docs/remote-jobs.md, "Operators"): remote jobs by phase (frozen, awaiting
 * the remote side, submitting), one remote job, and the operator's actions of
 * `soniq remote resolve|poll-now` through `soniq.remote`: resolve a frozen job as
 * accepted <task id> / not submitted / failed <reason>, and poll now. Bodies are the CLI's `--json`
 * shapes (admin/json/remote-job.ts), with error text cut like everywhere in the dashboard.
 */
import { remoteJobJson } from "../admin/json/index.js";
import type { SubmissionFilter } from "../backends/contract/submission-store.js";
import { accepted, failed, notSubmitted } from "../remote/results.js";
import { previewText } from "./preview.js";
import { BadRequest, jsonBody, type Route } from "./route.js";
import { ERROR_PREVIEW_BYTES, shownError } from "./views.js";

const PHASES: readonly SubmissionFilter[] = ["frozen", "awaiting", "submitting", "all"];

/** The remote-job routes. */
export const remoteRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/remote",
    async handle({ url, options }) {
      const phase = (url.searchParams.get("phase") || "all") as SubmissionFilter;
      if (!PHASES.includes(phase)) throw new BadRequest(`phase: one of ${PHASES.join(", ")}`);
      const raw = url.searchParams.get("limit");
      const limit = raw === null || raw === "" ? 100 : Number(raw);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500)
        throw new BadRequest("limit: 1–500");
      const [records, counts] = await Promise.all([
        options.soniq.remote.list(phase, limit),
        options.soniq.remote.counts(),
      ]);
      return {
        body: {
          remoteJobs: records.map((r) =>
            remoteJobJson(
              r,
              previewText(shownError(options, r.name, r.lastError), ERROR_PREVIEW_BYTES),
            ),
          ),
          counts,
        },
      };
    },
  },
  {
    method: "GET",
    path: "/api/remote/:id",
    async handle({ params, options }) {
      const r = await options.soniq.remote.show(params.id as string);
      return {
        body: remoteJobJson(
          r,
          previewText(shownError(options, r.name, r.lastError), ERROR_PREVIEW_BYTES),
        ),
      };
    },
  },
  {
    method: "POST",
    path: "/api/remote/:id/resolve",
    action: "remote.resolve",
    async handle({ params, options, request }) {
      const body = await jsonBody(request);
      const id = params.id as string;
      let resolution:
        | ReturnType<typeof accepted>
        | ReturnType<typeof notSubmitted>
        | ReturnType<typeof failed>;
      if (body.resolution === "accepted") {
        if (typeof body.taskId !== "string") throw new BadRequest("accepted needs taskId (text)");
        resolution = accepted(body.taskId);
      } else if (body.resolution === "not_submitted") {
        resolution = notSubmitted();
      } else if (body.resolution === "failed") {
        if (typeof body.reason !== "string" || body.reason.trim() === "") {
          throw new BadRequest("failed needs a reason (text)");
        }
        resolution = failed(body.reason);
      } else {
        throw new BadRequest('resolution must be "accepted", "not_submitted" or "failed"');
      }
      await options.soniq.remote.resolve(id, resolution);
      const result: Record<string, unknown> = { resolution: resolution.kind };
      if (resolution.kind === "accepted") result.taskId = resolution.taskId;
      if (resolution.kind === "failed") result.reason = resolution.error;
      return { body: { jobId: id, resolution: resolution.kind }, audit: { ids: [id], result } };
    },
  },
  {
    method: "POST",
    path: "/api/remote/:id/poll-now",
    action: "remote.pollNow",
    async handle({ params, options }) {
      await options.soniq.remote.pollNow(params.id as string);
      return { body: { jobId: params.id, due: "now" }, audit: { ids: [params.id as string] } };
    },
  },
];
