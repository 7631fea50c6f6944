/**
 * `soniq check-deploy <manifest...>`: reads each manifest (Kubernetes YAML, a Compose file, a
 * systemd unit), takes the settings from the `SONIQ_*` variables it sets (and a
 * `--shutdown-timeout` flag on the worker's command line) over the defaults, and compares the
 * supervisor's grace period with the drain budget, printing the arithmetic. Exit 0 when every
 * worker fits, 1 when one is too short, 2 when a manifest cannot be read.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { Command } from "commander";
import { type BudgetVerdict, checkGrace, drainBudget } from "../../deploy/budget.js";
import { type ManifestWorker, readManifest } from "../../deploy/manifest.js";
import { resolveSettings } from "../../settings-resolution.js";
import { number, print, runCommand } from "../runner.js";

interface CheckDeployFlags {
  /** Count `syncHandlerGraceSeconds`: the jobs include sync (worker-thread) handlers. */
  syncHandlers?: boolean;
  /** Seconds of margin. */
  margin?: number;
  json?: boolean;
}

/** One worker's result. */
interface WorkerCheck {
  file: string;
  worker: ManifestWorker;
  syncHandlers: boolean;
  verdict: BudgetVerdict;
}

/** Checks one manifest's workers. @throws SoniqError when it cannot be read or its settings are invalid. */
function checkFile(file: string, flags: CheckDeployFlags): WorkerCheck[] {
  const workers = readManifest(readFileSync(file, "utf8"), basename(file));
  return workers.map((worker) => {
    const settings = resolveSettings(
      worker.shutdownTimeoutFlag === undefined
        ? {}
        : { shutdownTimeout: worker.shutdownTimeoutFlag },
      worker.env,
    );
    const syncHandlers =
      flags.syncHandlers === true || worker.env.SONIQ_SYNC_HANDLER_GRACE_SECONDS !== undefined;
    const budget = drainBudget(settings, {
      preStopSeconds: worker.preStopSeconds + settings.preStopSeconds,
      syncHandlers,
      ...(flags.margin === undefined ? {} : { marginSeconds: flags.margin }),
    });
    return { file, worker, syncHandlers, verdict: checkGrace(worker.graceSeconds, budget) };
  });
}

function text(check: WorkerCheck): string {
  const { worker, verdict } = check;
  const lines = [
    `${check.file}: ${worker.label} (${worker.kind})`,
    `  grace:  ${worker.graceSource} = ${worker.graceSeconds} s`,
    `  budget: ${verdict.arithmetic}${check.syncHandlers ? "" : " (no sync handlers; --sync-handlers adds syncHandlerGraceSeconds)"}`,
    `  ${verdict.fits ? "OK" : "TOO SHORT"}: ${verdict.summary}`,
    ...worker.notes.map((note) => `  note: ${note}`),
  ];
  return lines.join("\n");
}

/** Adds `check-deploy <manifest...> [--sync-handlers] [--margin] [--json]` to `program`. */
export function register(program: Command): void {
  program
    .command("check-deploy")
    .description(
      "Check that a deployment's grace period (Kubernetes terminationGracePeriodSeconds, Compose stop_grace_period, systemd TimeoutStopSec) covers preStop + shutdownTimeout + shutdownSettle + NACK bound + margin (+ syncHandlerGraceSeconds), with the settings its SONIQ_* variables give. Exit 0 fits, 1 too short, 2 unreadable.",
    )
    .argument("<manifest...>", "Kubernetes YAML, docker-compose.yaml or a systemd .service unit")
    .option("--sync-handlers", "the jobs include sync (worker-thread) handlers")
    .option("--margin <seconds>", "safety margin in seconds (default: 5)", number("margin"))
    .option("--json", "print JSON for scripts")
    .action((files: string[], flags: CheckDeployFlags) =>
      runCommand(async () => {
        const checks = files.flatMap((file) => checkFile(file, flags));
        print(
          flags.json,
          checks.map((c) => ({
            file: c.file,
            kind: c.worker.kind,
            worker: c.worker.label,
            graceSeconds: c.verdict.graceSeconds,
            graceSource: c.worker.graceSource,
            requiredSeconds: c.verdict.requiredSeconds,
            arithmetic: c.verdict.arithmetic,
            fits: c.verdict.fits,
            notes: c.worker.notes,
          })),
          () => checks.map(text).join("\n"),
        );
        if (checks.some((c) => !c.verdict.fits)) process.exitCode = 1;
      }),
    );
}
