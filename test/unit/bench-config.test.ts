import { describe, expect, it } from "vitest";
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
