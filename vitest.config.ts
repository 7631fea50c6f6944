import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The default output, then the ten slowest files (every CI log shows where the time goes).
    reporters: ["default", "./test/helpers/slowest-files-reporter.ts"],
    // Each test file removes the temporary directories it made, even one that forgets to.
    setupFiles: ["test/helpers/remove-temp-dirs.ts"],
  },
});
