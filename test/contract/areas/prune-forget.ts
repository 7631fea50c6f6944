/**
 * Contract area: jobPruneFinished and workerForget. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** The jobPruneFinished and workerForget cases. */
export function pruneForgetCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("prune-forget", () => {
    it("jobPruneFinished › one row past its retention › deletes it and frees its dedup key", async () => {
      const b = await make();
      const keep = newJob();
      const drop = newJob({ dedupKey: "pruned-key" });
      await b.jobEnqueue({ jobs: [keep, drop] });
      for (const c of await claimDue(b, 2)) {
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: c.id === drop.id ? 0.001 : 3600,
        });
      }
      await new Promise((r) => setTimeout(r, 20)); // past the 1 ms retention
      expect(await b.jobPruneFinished({})).toBe(1);
      expect(await b.jobGet({ id: drop.id })).toBeNull();
      expect(await b.jobGet({ id: keep.id })).not.toBeNull();
      // The key is free again.
      const fresh = newJob({ dedupKey: "pruned-key" });
      expect((await b.jobEnqueue({ jobs: [fresh] }))[0]).toEqual({ id: fresh.id, inserted: true });
    });

    it("jobPruneFinished › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      const jobs = [newJob(), newJob(), newJob()];
      await b.jobEnqueue({ jobs });
      for (const c of await claimDue(b, 3)) {
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: 0.001,
        });
      }
      await new Promise((r) => setTimeout(r, 20)); // past the 1 ms retention
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(2);
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(1);
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(0);
    });

    it("workerForget › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      for (const id of ["a", "b", "c"]) {
        await b.workerRegister({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
      }
      await new Promise((r) => setTimeout(r, 60));
      expect(await b.workerForget({ notSeenForSeconds: 0.04, limit: 2 })).toBe(2);
      expect(await b.workerForget({ notSeenForSeconds: 0.04, limit: 2 })).toBe(1);
      expect(await b.workerList({ heartbeatTimeoutSeconds: 60 })).toEqual([]);
    });

    it("workerForget › one old and one new worker › forgets the old one", async () => {
      const b = await make();
      await b.workerRegister({ id: "old", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      // "old" is past the 1 s window; "new" has the whole second until the forget call (a 40 ms
      // window could pass between two statements on a loaded machine).
      await new Promise((r) => setTimeout(r, 1100));
      await b.workerRegister({ id: "new", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      expect(await b.workerForget({ notSeenForSeconds: 1 })).toBe(1);
      expect((await b.workerList({ heartbeatTimeoutSeconds: 60 })).map((w) => w.id)).toEqual([
        "new",
      ]);
    });
  });
}
