// `npm run test:busy-core` (scripts/busy-core.ts, issue 26): runs a command N times in a row while
// other processes keep cores busy, and exits — with 0 after N passing runs, with the failing run's
// code at the first failure — taking its spinning processes with it. After a passing 3-run pass
// it printed its summary and then never exited: the spinners' handles kept its event loop alive,
// so the spinner went on holding a core under whatever ran next.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The script with `args`, a 60 s bound (it takes about a second; it hung for ever before). */
function busyCore(args: string[]) {
  return spawnSync(
    process.execPath,
    ["--import", "tsx", "scripts/busy-core.ts", "--no-build", ...args],
    { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
  );
}

describe("scripts/busy-core.ts", () => {
  it("two passing runs › exit 0 with the summary, not held open by its spinner", () => {
    const r = busyCore(["--runs", "2", "--cores", "1", "--", process.execPath, "-e", ""]);
    expect(r.error).toBeUndefined();
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/busy-core: 2 run\(s\) passed in a row: \d+ s, \d+ s/);
  });

  it("a failing first run › exits with its code, the second never runs", () => {
    const r = busyCore(["--runs", "2", "--", process.execPath, "-e", "process.exit(3)"]);
    expect(r.status).toBe(3);
    expect(r.stdout).toContain("busy-core: run 1 FAILED (exit 3)");
    expect(r.stdout).not.toContain("run 2 of 2");
  });
});
