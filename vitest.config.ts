import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time. Vitest's default on this 2-core machine is one (cores − 1), yet
    // most files wait on worker processes, timers and PostgreSQL rather than compute: two halve
    // the suite's wall time, and every timing bound in the suite is set to hold under that load.
    maxWorkers: 2,
    // The default output, then the ten slowest files (every CI log shows where the time goes).
    reporters: ["default", "./test/helpers/slowest-files-reporter.ts"],
    // Each test file removes the temporary directories it made, even one that forgets to.
    setupFiles: ["test/helpers/remove-temp-dirs.ts"],
  },
});
