/**
 * The dashboard's real responses validate against docs/dashboard.openapi.json (issue 27 item 2):
 * on a SQLite file and PostgreSQL, seeded with a queued job, a dead letter, a frozen remote job
 * and schedules, every route whose 200 response the document describes (beyond `Any`) is called
 * and its body checked by ajv against that schema — the components generated from the shared zod
 * views and the dashboard's own answers included — and an error answer against `Error`. `Any` is
 * left only for downloads of a job's own arguments and results.
 */
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import formats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { createDashboard } from "../../src/dashboard/index.js";
import { runCli } from "../helpers/cli.js";
import { DashboardClient, serve } from "../helpers/dashboard.js";
import { prepared, targets } from "../helpers/e2e-targets.js";

const MODULE = "test/fixtures/schedule-jobs.ts";

interface Operation {
  responses: Record<string, { content?: { "application/json"?: { schema?: object } } }>;
}
const doc = JSON.parse(readFileSync("docs/dashboard.openapi.json", "utf8")) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; responses: Record<string, unknown> };
};

const ajv = new (Ajv as unknown as typeof Ajv.default)({ allErrors: true, strict: false });
(formats as unknown as (a: unknown) => void)(ajv);

/** Asserts `body` is what the document says `method path` answers with `status`. */
function expectDocumented(method: string, path: string, body: unknown, status = "200"): void {
  const operation = doc.paths[path]?.[method];
  expect(operation, `${method} ${path}`).toBeDefined();
  const schema =
    status === "200"
      ? operation?.responses["200"]?.content?.["application/json"]?.schema
      : { $ref: "#/components/schemas/Error" };
  expect(schema, `${method} ${path} ${status}`).toBeDefined();
  const validate = ajv.compile({ ...schema, components: doc.components });
  expect(
    validate(body),
    `${method} ${path}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1500)}`,
  ).toBe(true);
}

describe("dashboard OpenAPI document", () => {
  it("every route's success answer has a schema › only downloads of a job's own values are Any", () => {
    const untyped: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const ok = operation.responses["200"] ?? operation.responses["202"];
        const schema = ok?.content?.["application/json"]?.schema;
        if (!schema || JSON.stringify(schema).includes("/Any")) untyped.push(`${method} ${path}`);
      }
    }
    expect(untyped.sort()).toEqual([
      "get /api/dead-letter/export",
      "get /api/dead-letter/{id}/args",
      "get /api/jobs/{id}/args",
      "get /api/jobs/{id}/result",
    ]);
  });
});

for (const target of targets) {
  describe.skipIf(target.skip)(`dashboard OpenAPI responses › ${target.label}`, () => {
    it("every described route › real responses › valid against the document's schemas", async () => {
      const { env, db } = await prepared(target, { SONIQ_LOG_LEVEL: "warn" });
      const sync = await runCli(["schedules", "sync", "--module", MODULE], env);
      expect(sync.code, sync.stderr).toBe(0);
      const queued = await db.enqueue("report.send", { to: "ops" });
      const remote = await db.enqueue("media.render", {}, { queue: "remote" });
      const dead = await db.enqueue("report.fail", { n: 1 }, { queue: "dead" });
      const dead2 = await db.enqueue("report.fail", { n: 2 }, { queue: "dead" });
      const spare = await db.enqueue("report.send", { to: "spare" });
      const backend = await db.backend();
      await backend.workerRegister({
        id: "w",
        hostname: "h",
        pid: 1,
        queues: null,
        concurrency: 2,
      });
      for (const [id, queue] of [
        [remote, "remote"],
        [dead, "dead"],
        [dead2, "dead"],
      ] as const) {
        const [job] = await backend.jobClaim({ workerId: "w", queues: [queue], limit: 1 });
        const owner = { workerId: "w", claimToken: job?.claimToken as string };
        if (queue === "remote") {
          await backend.submissions.submissionMarkSubmitting({
            jobId: id,
            owner,
            name: "media.render",
            queue,
          });
          await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
        } else {
          await backend.jobDeadLetter({
            id,
            owner,
            error: "boom",
            reason: "max_attempts_exceeded",
            countAttempt: true,
          });
        }
      }
      const served = await serve(
        "fetch",
        createDashboard({
          soniq: db,
          auth: (req) => (req.headers.get("authorization") === "Bearer t" ? { name: "ada" } : null),
          access: () => "all",
        }),
      );
      try {
        const api = new DashboardClient(served.root, { authorization: "Bearer t" });
        await api.login();
        const call = async (method: string, path: string, documented: string, body?: unknown) => {
          const r = await api.fetch(method.toUpperCase(), path, body);
          expect(r.status, `${method} ${path}: ${await r.clone().text()}`).toBe(200);
          expectDocumented(method, documented, await r.json());
        };
        await call("get", "api/jobs", "/api/jobs");
        await call("get", `api/jobs/${queued}`, "/api/jobs/{id}");
        await call("get", "api/dead-letter", "/api/dead-letter");
        await call("get", `api/dead-letter/${dead}`, "/api/dead-letter/{id}");
        await call("get", "api/queues", "/api/queues");
        await call("get", "api/history", "/api/history");
        await call("get", "api/workers", "/api/workers");
        await call("get", "api/workers/w", "/api/workers/{id}");
        await call("get", "api/schedules", "/api/schedules");
        await call("get", "api/schedules/reports.nightly", "/api/schedules/{id}");
        await call("get", "api/remote", "/api/remote");
        await call("get", `api/remote/${remote}`, "/api/remote/{id}");
        await call("post", "api/queues/default/pause", "/api/queues/{name}/pause");
        await call("post", "api/queues/default/resume", "/api/queues/{name}/resume");
        await call("patch", "api/queues/default", "/api/queues/{name}", { maxRunning: 2 });
        await call("post", "api/schedules/reports.nightly/pause", "/api/schedules/{id}/pause");
        await call("post", "api/schedules/reports.nightly/resume", "/api/schedules/{id}/resume");
        await call("post", "api/schedules/reports.nightly/run-now", "/api/schedules/{id}/run-now");
        await call("post", `api/remote/${remote}/resolve`, "/api/remote/{id}/resolve", {
          resolution: "accepted",
          taskId: "tsk_1",
        });
        await call("post", `api/remote/${remote}/poll-now`, "/api/remote/{id}/poll-now");
        // The dashboard's own answers (src/dashboard/meta-json.ts).
        await call("get", "api/me", "/api/me");
        await call("get", "api/overview", "/api/overview");
        await call("get", "api/health/live", "/api/health/live");
        await call("get", "api/jobs/count?status=queued", "/api/jobs/count");
        await call("post", `api/jobs/${spare}/cancel`, "/api/jobs/{id}/cancel");
        await call("post", `api/jobs/${spare}/retry`, "/api/jobs/{id}/retry");
        await call("delete", `api/jobs/${spare}`, "/api/jobs/{id}");
        await call("post", `api/dead-letter/${dead2}/replay`, "/api/dead-letter/{id}/replay");
        await call("delete", `api/dead-letter/${dead}`, "/api/dead-letter/{id}");
        await call("post", "api/jobs/bulk", "/api/jobs/bulk", {
          action: "cancel",
          filter: { status: "queued" },
        });
        const missing = await api.fetch("GET", "api/jobs/00000000-0000-4000-8000-000000000000");
        expect(missing.status).toBe(404);
        expectDocumented("get", "/api/jobs/{id}", await missing.json(), "404");
      } finally {
        await served.close();
        await db.close();
      }
    }, 120_000);
  });
}
