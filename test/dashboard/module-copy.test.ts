/**
 * The dashboard over a Soniq instance from another copy of Soniq's modules — what `soniq
 * dashboard ./jobs.ts` meets when tsx's CommonJS hook loads the job module (and its `soniq`
 * import) apart from the CLI's own copy. The admin API's errors must still map to their HTTP
 * status (404, 400, 409), not 500, and a job's detail (which asks for a remote record that is
 * not there) must load.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The built package: a second copy of every module, its SoniqError a different class.
import { Soniq as OtherSoniq } from "../../dist/index.js";
import { createDashboard } from "../../src/dashboard/index.js";
import { isSoniqError, SoniqError } from "../../src/errors.js";
import { DashboardClient, type Served, serve } from "../helpers/dashboard.js";

describe("dashboard › a Soniq instance from another module copy", () => {
  const soniq = new OtherSoniq({ databaseUrl: "memory:", logLevel: "silent" });
  soniq.job({ name: "copy.job", handler: async () => null });
  let served: Served;
  let jobId: string;

  beforeAll(async () => {
    jobId = await soniq.enqueue("copy.job", {});
    const dashboard = createDashboard({
      soniq: soniq as never,
      auth: () => ({ name: "ada" }),
      access: "all",
    });
    served = await serve("fetch", dashboard);
  });
  afterAll(async () => {
    await served?.close();
    await soniq.close();
  });

  it("dashboard › another module copy › its errors are SoniqErrors to this copy", async () => {
    const err = await soniq.jobs.retry("no-such-job").catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(SoniqError);
    expect(isSoniqError(err, "NOT_FOUND")).toBe(true);
  });

  it("dashboard › another module copy › job detail 200, admin errors keep their status", async () => {
    const client = new DashboardClient(served.root);
    await client.login();
    const detail = await client.fetch("GET", `api/jobs/${jobId}`);
    expect(detail.status).toBe(200);
    expect(((await detail.json()) as { id: string }).id).toBe(jobId);
    const badStatus = await client.fetch("GET", "api/jobs?status=bogus");
    expect(badStatus.status).toBe(400);
    expect(((await badStatus.json()) as { error: { code: string } }).error.code).toBe(
      "INVALID_OPTION",
    );
    expect((await client.fetch("GET", "api/jobs?cursor=garbage")).status).toBe(400);
    expect((await client.fetch("POST", "api/jobs/no-such-job/retry")).status).toBe(404);
  });
});
