/**
 * `npm run test:busy-core [-- --runs N] [-- --cores N] [-- -- <command …>]`: runs the test suite
 * (by default `npx vitest run`, after one `npm run build`) N times in a row (default 3) while N
 * other processes (default 1) each keep one core busy, as a CI machine shared with other work
 * would. Stops at the first failing run and exits with its code; prints each run's wall time.
 *
 * Issue 26 asks that the whole suite pass three times in a row under this load: a test that
 * fails here depends on timing it does not state, and is fixed at its cause, never rerun.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const USAGE =
  "usage: npm run test:busy-core -- [--runs N] [--cores N] [--no-build] [-- <command> [args…]]";
const { values, positionals } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    cores: { type: "string", default: "1" },
    "no-build": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  allowPositionals: true,
  strict: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
function int(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`busy-core: --${name} must be an integer >= ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}
const runs = int("runs", values.runs, 1);
const cores = int("cores", values.cores, 0);
const command = positionals.length > 0 ? positionals : ["npx", "vitest", "run"];

/** A process that spins one core until it is killed. */
function spinner(): ChildProcess {
  return spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
}

if (!values["no-build"]) {
  const build = spawnSync("npm", ["run", "build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const spinners = Array.from({ length: cores }, spinner);
const stopSpinners = () => {
  for (const s of spinners) s.kill("SIGKILL");
};
process.on("exit", stopSpinners);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopSpinners();
    process.exit(130);
  });
}

const env = { ...process.env, TEST_REQUIRE_POSTGRES: process.env.TEST_REQUIRE_POSTGRES ?? "1" };
const times: string[] = [];
for (let run = 1; run <= runs; run++) {
  const started = Date.now();
  process.stdout.write(
    `\nbusy-core: run ${run} of ${runs} (${cores} core(s) busy): ${command.join(" ")}\n`,
  );
  const [bin, ...args] = command as [string, ...string[]];
  const result = spawnSync(bin, args, { stdio: "inherit", env });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  times.push(`${seconds} s`);
  if (result.status !== 0) {
    process.stdout.write(
      `busy-core: run ${run} FAILED (exit ${result.status}) after ${seconds} s\n`,
    );
    process.exit(result.status ?? 1);
  }
}
process.stdout.write(`busy-core: ${runs} run(s) passed in a row: ${times.join(", ")}\n`);
// The spinners' child-process handles keep the event loop alive: without an explicit exit the
// script printed the line above and then went on holding its cores (found after a 3-run pass).
process.exit(0);
