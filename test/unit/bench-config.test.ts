import { describe, expect, it } from "vitest";
import { pgBossPlan } from "../../bench/adapters/pgboss-config.js";
import { loadConfig } from "../../bench/config.js";

describe("bench config: --baseline", () => {
  it("is off by default and the baseline libraries need it", () => {
    expect(loadConfig([], {}).baseline).toBeUndefined();
    expect(() => loadConfig(["--only", "soniq-baseline-pg"], {})).toThrow(/needs --baseline/);
  });

  it("adds each Soniq backend's baseline right after it", () => {
    const config = loadConfig(["--baseline", "HEAD~5"], {});
    expect(config.baseline).toBe("HEAD~5");
    expect(config.libraries.slice(0, 4)).toEqual([
      "soniq-pg",
      "soniq-baseline-pg",
      "soniq-sqlite",
      "soniq-baseline-sqlite",
    ]);
    expect(
      loadConfig(["--only", "bullmq,soniq-sqlite", "--baseline=abc123"], {}).libraries,
    ).toEqual(["bullmq", "soniq-sqlite", "soniq-baseline-sqlite"]);
  });

  it("keeps an explicit --only order and rejects a missing ref or one without Soniq", () => {
    expect(
      loadConfig(["--only", "soniq-baseline-pg,soniq-pg", "--baseline", "main"], {}).libraries,
    ).toEqual(["soniq-baseline-pg", "soniq-pg"]);
    expect(() => loadConfig(["--baseline"], {})).toThrow(/git ref/);
    expect(() => loadConfig(["--baseline", "--quick"], {})).toThrow(/git ref/);
    expect(() => loadConfig(["--baseline", "HEAD", "--only", "bullmq"], {})).toThrow(
      /soniq-pg or soniq-sqlite/,
    );
  });
});

describe("bench config: pg-boss work() loops", () => {
  it("runs batches of min(c, 10) in c ÷ batch loops, never more than the cap in flight", () => {
    expect(pgBossPlan(10)).toEqual({ loops: 1, batchSize: 10 });
    expect(pgBossPlan(100)).toEqual({ loops: 10, batchSize: 10 });
    expect(pgBossPlan(1)).toEqual({ loops: 1, batchSize: 1 });
    for (const c of [1, 3, 10, 15, 50, 100, 101]) {
      const { loops, batchSize } = pgBossPlan(c);
      expect(loops * batchSize).toBeLessThanOrEqual(c);
      expect(loops).toBeGreaterThanOrEqual(1);
    }
  });
});
