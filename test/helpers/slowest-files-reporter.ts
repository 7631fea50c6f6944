/**
 * A Vitest reporter that prints, after the run, the ten test files that took longest (seconds
 * spent in the file: its import, set-up, tests and hooks) — so every CI log shows where the suite's time goes
 * and a file that grows slower is seen (issue 26, "a CI that does not flake").
 *
 * Registered beside the default reporter in vitest.config.ts.
 */
import type { Reporter, TestModule } from "vitest/node";

/** How many files the summary lists. */
export const SLOWEST_FILES_SHOWN = 10;

/** Seconds a file took: importing it, its set-up files, its tests and hooks. */
function fileSeconds(module: TestModule): number {
  const d = module.diagnostic();
  return (d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000;
}

/** Prints the slowest test files at the end of a run. */
export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules
      .map((module) => ({
        file: module.relativeModuleId,
        seconds: fileSeconds(module),
        tests: [...module.children.allTests()].length,
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST_FILES_SHOWN);
    if (rows.length === 0) return;
    const lines = rows.map(
      (row) => `  ${row.seconds.toFixed(1).padStart(7)} s  ${row.file} (${row.tests} tests)`,
    );
    process.stdout.write(`\nSlowest ${rows.length} test files:\n${lines.join("\n")}\n`);
  }
}
