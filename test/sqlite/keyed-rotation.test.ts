// The SQLite keyed claim's rotating pass (docs/flow-control.md, "Fairness: the rule and its
// bound"): each claim takes keys' heads in key order from just after the key where the process's
// previous keyed claim stopped, wrapping round; only a claim that passed every key takes second
// jobs of keys with room (the full pass).
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: the keyed claim's rotating pass", () => {
  let backend: SqliteBackend;
  let soniq: Soniq;

  beforeAll(async () => {
    backend = new SqliteBackend({ path: join(tempDir("soniq-keyed-rotation-"), "jobs.db") });
    await backend.setup();
    soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  });
  afterAll(async () => {
    await soniq.close();
    removeTempDirs();
  });

  /** `<key><n>` of each claimed job, sorted (claimed arguments are JSON text). */
  const keysOf = (jobs: { args: unknown }[]) =>
    jobs
      .map((j) => {
        const args = (typeof j.args === "string" ? JSON.parse(j.args) : j.args) as {
          k: string;
          n: number;
        };
        return `${args.k}${args.n}`;
      })
      .sort();

  it("claims of 2 over 5 keys › take heads k0 k1, then k2 k3, then k4 and wrap to k0's second; a claim of 10 takes the 4 left", async () => {
    const job = soniq.job({
      name: "rotation.job",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 5 },
      handler: async () => undefined,
    });
    for (let n = 0; n < 2; n++) {
      // Enqueued k4 first: the walk goes by key, not by age (a ranking of every key's heads by
      // claim order would take k4 and k3 first).
      for (let k = 4; k >= 0; k--) await job.enqueue({ k: `k${k}`, n });
    }
    const claim = (limit: number) => backend.jobClaim({ workerId: "w1", queues: null, limit });
    expect(keysOf(await claim(2))).toEqual(["k00", "k10"]);
    expect(keysOf(await claim(2))).toEqual(["k20", "k30"]);
    expect(keysOf(await claim(2))).toEqual(["k01", "k40"]);
    expect(keysOf(await claim(10))).toEqual(["k11", "k21", "k31", "k41"]);
    expect(await claim(10)).toEqual([]);
  });

  it("one key with 300 queued, another with 1 › a claim of 1 after the big key's head takes the small key's job (one rotation)", async () => {
    const job = soniq.job({
      name: "rotation.tenants",
      concurrency: { key: (args: { k: string; n: number }) => args.k, limit: 300 },
      handler: async () => undefined,
    });
    await job.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ args: { k: "big", n } })));
    await job.enqueue({ k: "small", n: 0 });
    const claim = (limit: number) => backend.jobClaim({ workerId: "w2", queues: null, limit });
    // Whatever the previous claim's key, the small key's job is taken within two claims of 1.
    const first = keysOf(await claim(1));
    const second = keysOf(await claim(1));
    expect([...first, ...second]).toContain("small0");
    // A claim larger than the keys: the full pass fills it from the big key.
    expect((await claim(50)).length).toBe(50);
  });
});
