/**
 * The schedule routes: every schedule with its next instants and its newest outcomes, one
 * schedule with its history, and pause / resume / run now through `soniq.schedules` (the admin
 * facade `soniq schedules …` uses). Bodies are the CLI's `--json` shapes (admin/json/schedule.ts).
 */
import { scheduleDetailJson } from "../admin/json/index.js";
import { BadRequest, type Route } from "./route.js";

/** Next instants per schedule in the list. */
export const LIST_UPCOMING = 3;
/** History rows per schedule in the list (the newest is "last run"). */
export const LIST_RUNS = 5;

function count(params: URLSearchParams, key: string, fallback: number, max: number): number {
  const raw = params.get(key);
  if (raw === null || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new BadRequest(`${key}: 0–${max}`);
  return n;
}

/** The schedule routes. */
export const scheduleRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/schedules",
    async handle({ options }) {
      const admin = options.soniq.schedules;
      const rows = await admin.list();
      const schedules = await Promise.all(
        rows.map(async (row) =>
          scheduleDetailJson(await admin.show(row.id, { next: LIST_UPCOMING, runs: LIST_RUNS })),
        ),
      );
      return { body: { schedules } };
    },
  },
  {
    method: "GET",
    path: "/api/schedules/:id",
    async handle({ params, url, options }) {
      const details = await options.soniq.schedules.show(params.id as string, {
        next: count(url.searchParams, "next", 5, 100),
        runs: count(url.searchParams, "runs", 20, 500),
      });
      return { body: scheduleDetailJson(details) };
    },
  },
  {
    method: "POST",
    path: "/api/schedules/:id/pause",
    action: "schedules.pause",
    async handle({ params, options }) {
      await options.soniq.schedules.pause(params.id as string);
      return {
        body: scheduleDetailJson(await options.soniq.schedules.show(params.id as string)),
        audit: { ids: [params.id as string] },
      };
    },
  },
  {
    method: "POST",
    path: "/api/schedules/:id/resume",
    action: "schedules.pause",
    async handle({ params, options }) {
      await options.soniq.schedules.resume(params.id as string);
      return {
        body: scheduleDetailJson(await options.soniq.schedules.show(params.id as string)),
        audit: { action: "schedules.resume", ids: [params.id as string] },
      };
    },
  },
  {
    method: "POST",
    path: "/api/schedules/:id/run-now",
    action: "schedules.run",
    async handle({ params, options }) {
      const jobId = await options.soniq.schedules.runNow(params.id as string);
      return {
        body: { id: params.id, jobId },
        audit: { ids: [params.id as string], result: { jobId } },
      };
    },
  },
];
