/**
 * `definition.waitFor(id)` (issue 31 item 4) in one process, on memory mode through
 * `soniq/testing`: typed from the definition, it resolves once a drain has run the job; a failure
 * that will be retried is not final; bad options are refused with `INVALID_OPTION`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isSoniqError, Soniq } from "../../src/index.js";
import { type SoniqTesting, startTesting } from "../../src/testing/index.js";

const open: Array<{ soniq: Soniq; testing: SoniqTesting }> = [];
afterEach(async () => {
  for (const { soniq, testing } of open.splice(0)) {
    await testing.stop();
    await soniq.close();
  }
});

describe("definition.waitFor", () => {
  it("waitFor › a job a later drain runs, failing once first › resolves with its typed result after the retry", async () => {
    const soniq = new Soniq({ logLevel: "silent" });
    let runs = 0;
    const render = soniq.job({
      name: "pages.render",
      retry: { kind: "fixed", delay: 10 },
      handler: async (args: { page: number }) => {
        runs += 1;
        if (runs === 1) throw new Error("first run fails");
        return { url: `/pages/${args.page}.png` };
      },
    });
    const testing = await startTesting(soniq);
    open.push({ soniq, testing });
    const id = await render.enqueue({ page: 7 });
    let settled = false;
    const waiting = render.waitFor(id, { timeout: 60 }).finally(() => {
      settled = true;
    });
    expect((await testing.drain()).failed).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    testing.clock.advance(10_000);
    expect((await testing.drain()).done).toBe(1);
    const result: { url: string } = await waiting;
    expect(result).toEqual({ url: "/pages/7.png" });
    // The handle enqueue returns: awaited, the id; result(), the typed result.
    const job = render.enqueue({ page: 8 });
    const handled = job.result({ timeout: 60 });
    expect(typeof (await job)).toBe("string");
    expect((await testing.drain()).done).toBe(1);
    const typed: { url: string } = await handled;
    expect(typed).toEqual({ url: "/pages/8.png" });
  });

  it("waitFor › bad options or id › INVALID_OPTION / INVALID_INPUT, nothing waited", async () => {
    const soniq = new Soniq({ logLevel: "silent" });
    const testing = await startTesting(soniq);
    open.push({ soniq, testing });
    for (const options of [{ timeout: 0 }, { timeout: -1 }, { timeout: Number.NaN }, { wait: 1 }]) {
      const err = await soniq.jobs.waitFor("x", options as never).catch((e: unknown) => e);
      expect(isSoniqError(err, "INVALID_OPTION"), JSON.stringify(options)).toBe(true);
    }
    const err = await soniq.jobs.waitFor("").catch((e: unknown) => e);
    expect(isSoniqError(err, "INVALID_INPUT")).toBe(true);
  });
});
