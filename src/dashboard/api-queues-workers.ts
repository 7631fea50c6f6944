/**
 * The queue and worker routes: queues with counts, oldest claimable age and paused state; the
 * per-minute history the charts draw; what flow-control limits hold back per queue and key; pause, resume, `maxRunning` and `unclaimableAfter`; worker incarnations with
 * their shutdown state, drain start, deadline and in-flight jobs. A write to a queue nothing
 * knows answers 404 `NOT_FOUND` with a "did you mean" hint unless the URL says `?create=true`
 * (the admin API's `{ create: true }`).
 */
import { queueFlowJson, queueJson, workerJson } from "../admin/json/index.js";
import { BadRequest, jsonBody, type Route } from "./route.js";

/** The admin API's write options from the URL: `?create=true` configures an unknown queue. */
function writeOptions(url: URL): { create: boolean } {
  return { create: url.searchParams.get("create") === "true" };
}

/** The queue and worker routes. */
export const queueWorkerRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/queues",
    async handle({ options }) {
      return { body: { queues: (await options.soniq.queues.list()).map(queueJson) } };
    },
  },
  {
    method: "GET",
    path: "/api/history",
    /**
     * `?queue=` (optional: every queue), `?window=` seconds (60–86400, default 86400) →
     * `{ history }`: `soniq.queues.history()` (a `QueueHistory`, instants as ISO text).
     */
    async handle({ url, options }) {
      const queue = url.searchParams.get("queue");
      const window = url.searchParams.get("window");
      if (window !== null && !/^[0-9]{1,6}$/.test(window)) {
        throw new BadRequest("window must be a whole number of seconds");
      }
      const history = await options.soniq.queues.history({
        queue: queue === null || queue === "" ? null : queue,
        ...(window === null ? {} : { windowSeconds: Number(window) }),
      });
      return { body: { history } };
    },
  },
  {
    method: "GET",
    path: "/api/flow",
    /**
     * `?queue=` (optional: every queue with keyed jobs), `?top=` keys per queue (0–1000, default
     * 10) → `{ flow }`: `soniq.queues.flow()` (QueueFlow[], instants as ISO text).
     */
    async handle({ url, options }) {
      const queue = url.searchParams.get("queue");
      const top = url.searchParams.get("top");
      if (top !== null && !/^[0-9]{1,4}$/.test(top)) {
        throw new BadRequest("top must be a whole number from 0 to 1000");
      }
      const flow = await options.soniq.queues.flow({
        queue: queue === null || queue === "" ? null : queue,
        ...(top === null ? {} : { topKeys: Number(top) }),
      });
      return { body: { flow: flow.map(queueFlowJson) } };
    },
  },
  {
    method: "POST",
    path: "/api/queues/:name/pause",
    action: "queues.pause",
    async handle({ params, options, url }) {
      const queue = await options.soniq.queues.pause(params.name as string, writeOptions(url));
      return { body: queueJson(queue), audit: { ids: [params.name as string] } };
    },
  },
  {
    method: "POST",
    path: "/api/queues/:name/resume",
    action: "queues.pause",
    async handle({ params, options, url }) {
      const queue = await options.soniq.queues.resume(params.name as string, writeOptions(url));
      return {
        body: queueJson(queue),
        audit: { action: "queues.resume", ids: [params.name as string] },
      };
    },
  },
  {
    method: "PATCH",
    path: "/api/queues/:name",
    action: "queues.set",
    async handle({ params, options, request, url }) {
      const body = await jsonBody(request);
      const unknown = Object.keys(body).filter(
        (k) => k !== "maxRunning" && k !== "unclaimableAfter",
      );
      if (unknown.length > 0) {
        throw new BadRequest(`unknown queue setting(s) ${unknown.join(", ")}`);
      }
      const settings: { maxRunning?: number | null; unclaimableAfter?: number | null } = {};
      for (const key of ["maxRunning", "unclaimableAfter"] as const) {
        if (!(key in body)) continue;
        const value = body[key];
        if (!(value === null || (typeof value === "number" && Number.isInteger(value)))) {
          throw new BadRequest(`${key} must be a whole number or null`);
        }
        settings[key] = value;
      }
      if (Object.keys(settings).length === 0) {
        throw new BadRequest("give maxRunning and/or unclaimableAfter (a whole number, or null)");
      }
      // The admin API checks the ranges (maxRunning 1..100000, unclaimableAfter in seconds).
      const queue = await options.soniq.queues.set(
        params.name as string,
        settings,
        writeOptions(url),
      );
      return {
        body: queueJson(queue),
        audit: { ids: [params.name as string], result: settings },
      };
    },
  },
  {
    method: "GET",
    path: "/api/workers",
    async handle({ options }) {
      return {
        body: { workers: (await options.soniq.workers()).map(workerJson), now: new Date() },
      };
    },
  },
  {
    method: "GET",
    path: "/api/workers/:id",
    async handle({ params, options }) {
      const worker = (await options.soniq.workers()).find((w) => w.id === params.id);
      if (!worker) {
        return Response.json(
          { error: { code: "NOT_FOUND", message: `no worker with id ${params.id}` } },
          { status: 404 },
        );
      }
      return { body: { worker: workerJson(worker), now: new Date() } };
    },
  },
];
