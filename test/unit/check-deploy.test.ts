/** `soniq check-deploy` and the deploy budget: every file under deploy/ fits; a short grace is refused with its numbers. */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { checkGrace, drainBudget, startupBudgetWarning } from "../../src/deploy/budget.js";
import { parseDuration, readManifest } from "../../src/deploy/manifest.js";
import { Soniq } from "../../src/index.js";
import { resolveSettings } from "../../src/settings-resolution.js";
import { REPO, runCli } from "../helpers/cli.js";
import { memoryBackend } from "../helpers/test-backends.js";

const defaults = resolveSettings({}, {});
const temp = mkdtempSync(join(tmpdir(), "soniq-check-deploy-"));

describe("check-deploy", () => {
  it("drainBudget › defaults, no sync handlers › shutdownTimeout + settle + NACK bound + margin = 38 s", () => {
    const budget = drainBudget(defaults, { syncHandlers: false });
    expect(budget.requiredSeconds).toBe(38);
    expect(checkGrace(30, budget)).toMatchObject({
      fits: false,
      arithmetic: "shutdownTimeout 30 + shutdownSettle 2 + NACK bound 1 + margin 5 = 38 s",
    });
  });

  it("drainBudget › sync handlers › syncHandlerGraceSeconds (default = jobTimeout) is added", () => {
    expect(drainBudget(defaults, { syncHandlers: true }).requiredSeconds).toBe(338);
  });

  it("readManifest › each kind › grace, its default when absent, preStop, SONIQ_* and the flag", () => {
    const [k8s] = readManifest(
      `apiVersion: apps/v1
kind: StatefulSet
metadata: { name: w }
spec:
  template:
    spec:
      containers:
        - name: side
          image: x
        - name: worker
          command: ["node", "soniq/dist/cli/main.js", "worker", "jobs.js", "--shutdown-timeout", "12"]
          env:
            - { name: SONIQ_SHUTDOWN_SETTLE, value: "3" }
            - { name: SONIQ_DATABASE_URL, valueFrom: { secretKeyRef: { name: a, key: b } } }
          lifecycle: { preStop: { sleep: { seconds: 7 } } }
`,
      "w.yaml",
    );
    expect(k8s).toMatchObject({
      graceSeconds: 30,
      graceSource: "terminationGracePeriodSeconds (default)",
      preStopSeconds: 7,
      env: { SONIQ_SHUTDOWN_SETTLE: "3" },
      shutdownTimeoutFlag: 12,
    });
    const [compose] = readManifest(
      "services:\n  w:\n    command: soniq worker jobs.js\n    stop_grace_period: 1m30s\n    environment: [SONIQ_SHUTDOWN_TIMEOUT=60]\n",
    );
    expect(compose).toMatchObject({ graceSeconds: 90, env: { SONIQ_SHUTDOWN_TIMEOUT: "60" } });
    const [unit] = readManifest(
      '[Service]\nEnvironment="SONIQ_SHUTDOWN_TIMEOUT=10" SONIQ_SHUTDOWN_SETTLE=1\nExecStart=/usr/bin/soniq worker j.js\n',
      "w.service",
    );
    expect(unit).toMatchObject({
      graceSeconds: 90,
      graceSource: "TimeoutStopSec (default)",
      env: { SONIQ_SHUTDOWN_TIMEOUT: "10", SONIQ_SHUTDOWN_SETTLE: "1" },
    });
    expect(parseDuration("1min 30s", "x")).toBe(90);
    expect(() => parseDuration("soon", "TimeoutStopSec")).toThrow(/TimeoutStopSec/);
  });

  it("soniq check-deploy › a file that does not exist › FILE_NOT_FOUND naming it, exit 2", async () => {
    const run = await runCli(["check-deploy", "missing.yaml", "--json"], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("soniq: FILE_NOT_FOUND: missing.yaml: no such file");
    expect(run.stderr).not.toContain("UNEXPECTED");
    expect(JSON.parse(run.stdout).error.code).toBe("FILE_NOT_FOUND");
  });

  it("soniq check-deploy › every file under deploy/ › accepted (exit 0), arithmetic printed", async () => {
    const files = readdirSync(join(REPO, "deploy")).map((f) => join("deploy", f));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const run = await runCli(["check-deploy", ...files], {});
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "preStop 5 + shutdownTimeout 30 + shutdownSettle 2 + NACK bound 1 + margin 5 = 43 s",
    );
    expect(run.stdout.match(/ OK: /g)).toHaveLength(files.length);
  });

  it("soniq check-deploy › grace shorter than the budget › exit 1 naming both numbers", async () => {
    const file = join(temp, "short.yaml");
    writeFileSync(
      file,
      `apiVersion: v1
kind: Pod
metadata: { name: short }
spec:
  terminationGracePeriodSeconds: 30
  containers:
    - name: worker
      command: ["soniq", "worker", "jobs.js"]
      env: [{ name: SONIQ_SHUTDOWN_TIMEOUT, value: "30" }]
      lifecycle: { preStop: { exec: { command: ["sh", "-c", "sleep 5"] } } }
`,
    );
    const run = await runCli(["check-deploy", file], {});
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("TOO SHORT: 30 s < 43 s: 13 s short");
    expect(run.stdout).toContain("preStop 5 + shutdownTimeout 30");
    const json = await runCli(["check-deploy", "--json", "--sync-handlers", file], {});
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ graceSeconds: 30, requiredSeconds: 343, fits: false }),
    ]);
  });

  it("soniq check-deploy › not a manifest › exit 2", async () => {
    const file = join(temp, "nothing.yaml");
    writeFileSync(file, "hello: world\n");
    const run = await runCli(["check-deploy", file], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no worker found/);
  });

  it("worker start › terminationGraceSeconds shorter than the budget › a warning with the arithmetic", async () => {
    expect(
      startupBudgetWarning({ ...defaults, terminationGraceSeconds: 60 }, false),
    ).toBeUndefined();
    const logs: Array<Record<string, unknown>> = [];
    const logger = pino({ level: "warn" }, { write: (l: string) => void logs.push(JSON.parse(l)) });
    const soniq = new Soniq({
      backend: await memoryBackend(),
      logger,
      env: { SONIQ_TERMINATION_GRACE_SECONDS: "20" },
    });
    soniq.job({ name: "t.noop", handler: async () => undefined });
    const worker = soniq.worker();
    await worker.start();
    await worker.stop();
    const warning = logs.find((l) =>
      String(l.msg).startsWith("terminationGraceSeconds is too short"),
    );
    expect(warning).toMatchObject({ termination_grace_seconds: 20, required_seconds: 38 });
    expect(String(warning?.msg)).toContain("20 s < 38 s");
  });
});
