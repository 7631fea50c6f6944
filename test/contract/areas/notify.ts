/**
 * Contract area: the notifier. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, newJob } from "../helpers.js";

/** The notifier cases. */
export function notifyCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("notify", () => {
    it("notifier.subscribe › a job enqueued › wakes with its queue", async () => {
      const b = await make();
      const woke = new Promise<string>((resolve) => {
        const off = b.notifier.subscribe((queue) => {
          // PostgreSQL wakes every queue ("*") once its LISTEN is in place: not this job's wake.
          if (queue === "*") return;
          off();
          resolve(queue);
        });
      });
      // Give a LISTEN connection a moment to be ready, then enqueue until the wake arrives.
      let woken = false;
      void woke.then(() => {
        woken = true;
      });
      while (!woken) {
        await b.jobEnqueue({ jobs: [newJob({ queue: "wake" })] });
        await Promise.race([woke, new Promise((r) => setTimeout(r, 500))]);
      }
      await expect(woke).resolves.toBe("wake");
    });
  });
}
