import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One test file at a time on a 2-core machine (vitest's default: cores − 1). Two at a time
    // (`npx vitest run --maxWorkers=2`) took 1,076 s instead of about 1,400 s at load average 14,
    // but at load 17–31 five drain and lease bounds failed, so CI keeps one until the timing
    // tests are shown to hold with two.
    // The default output, then the ten slowest files (every CI log shows where the time goes).
    reporters: ["default", "./test/helpers/slowest-files-reporter.ts"],
    // Each test file removes the temporary directories it made, even one that forgets to.
    setupFiles: ["test/helpers/remove-temp-dirs.ts"],
  },
});
