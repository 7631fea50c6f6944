/**
 * Checkpoints with real worker processes (docs/checkpoints.md), on a SQLite file and on
 * PostgreSQL: a job walking items with a checkpoint every 20 is SIGKILLed mid-walk, then its next
 * worker is SIGTERMed and NACKs it at the shutdown deadline, then a third worker finishes it.
 * Afterwards every item was processed, none more than twice, each run resumed at (or after) the
 * last checkpoint that was durable before its interruption, and the repeats are only the items
 * after it; no attempt was spent. A worker SIGSTOPped past the stale window loses the job to
 * recovery; resumed, its next checkpoint is refused (CLAIM_LOST). An effect step in flight at a SIGKILL freezes its job: the
 * next worker never runs it again; an operator's answer (`soniq jobs resolve-step`) finishes it.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { prepared, startWorker as start, targets } from "../helpers/e2e-targets.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";

const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.2",
  SONIQ_HEARTBEAT_TIMEOUT: "1",
  SONIQ_POLL_INTERVAL: "0.1",
  SONIQ_SHUTDOWN_TIMEOUT: "1",
  SONIQ_SHUTDOWN_SETTLE: "0.3",
};

const workers: Array<ReturnType<typeof start>> = [];
afterEach(() => {
  for (const w of workers.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
  }
});

function startWorker(env: Record<string, string>) {
  const w = start(env);
  workers.push(w);
  return w;
}

/** The fixture's lines: `[kind, value]` for "item", "cp" and "start" lines, in order. */
function lines(path: string): Array<[string, number]> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [kind, , value] = l.split(" ");
      return [kind as string, Number(value)];
    });
}

const count = (path: string, kind: string) => lines(path).filter(([k]) => k === kind).length;

/**
 * SIGSTOPs `child` outside a SQLite write transaction (as test/e2e/prefetch.test.ts does: a
 * process stopped inside one would stall every writer of the file).
 */
function stopOutsideWriteLock(child: ChildProcess, env: Record<string, string>): void {
  const url = env.SONIQ_DATABASE_URL ?? "";
  if (!url.startsWith("sqlite:")) {
    child.kill("SIGSTOP");
    return;
  }
  const lock = new Database(url.slice("sqlite:".length), { timeout: 30_000 });
  try {
    lock.exec("BEGIN IMMEDIATE");
    child.kill("SIGSTOP");
    lock.exec("COMMIT");
  } finally {
    lock.close();
  }
}

/** The worker id a started worker logged ("worker started"). */
function workerIdOf(w: ReturnType<typeof start>): string | undefined {
  const line = w
    .stderr()
    .split("\n")
    .find((l) => l.includes('"worker started"'));
  return line ? (JSON.parse(line) as { worker_id?: string }).worker_id : undefined;
}

for (const target of targets) {
  describe.skipIf(target.skip)(`checkpoints, real processes, ${target.label}`, () => {
    it("SIGKILL, then SIGTERM past the deadline › the walk resumes from its last durable checkpoint each time; every item processed, none more than twice", async () => {
      const log = join(tempDir(), "items.log");
      const { env, db } = await prepared(target, { ...FAST, E2E_ITEM_LOG: log });
      const ITEMS = 400;
      const EVERY = 20;
      const id = await db.enqueue("e2e.walk", { items: ITEMS, every: EVERY, itemMs: 5 });

      const first = startWorker(env);
      await first.ready;
      await waitFor(() => count(log, "cp") >= 3, 30_000, "three checkpoints");
      first.child.kill("SIGKILL");
      await first.exited;
      const cpBeforeKill = Math.max(
        ...lines(log)
          .filter(([k]) => k === "cp")
          .map(([, v]) => v),
      );
      const itemsAtKill = count(log, "item");

      const second = startWorker(env);
      await second.ready;
      await waitFor(() => count(log, "cp") >= 6, 30_000, "three more checkpoints");
      second.child.kill("SIGTERM");
      // Past the deadline (the walk ignores its signal): NACK'd, exit code 1.
      expect((await second.exited).code).toBe(1);
      const cpBeforeTerm = Math.max(
        ...lines(log)
          .filter(([k]) => k === "cp")
          .map(([, v]) => v),
      );
      expect(count(log, "item")).toBeGreaterThan(itemsAtKill);

      const third = startWorker(env);
      await third.ready;
      const done = await waitFor(
        async () => {
          const job = await db.getJob(id);
          return job?.status === "done" ? job : null;
        },
        60_000,
        "done",
      );
      third.child.kill("SIGTERM");
      await third.exited;

      const all = lines(log);
      const starts = all.filter(([k]) => k === "start").map(([, v]) => v);
      expect(starts).toHaveLength(3);
      expect(starts[0]).toBe(0);
      // Each run resumed at or after the last checkpoint logged (durable) before its interruption
      // (a checkpoint may have become durable just before the kill without being logged).
      expect(starts[1]).toBeGreaterThanOrEqual(cpBeforeKill);
      expect(starts[2]).toBeGreaterThanOrEqual(cpBeforeTerm);
      const seen = new Map<number, number>();
      for (const [k, v] of all) if (k === "item") seen.set(v, (seen.get(v) ?? 0) + 1);
      expect(seen.size).toBe(ITEMS);
      expect(Math.max(...seen.values())).toBeLessThanOrEqual(2);
      // Only items after the resume point were repeated: at most one checkpoint interval each time.
      const repeated = [...seen.values()].filter((n) => n === 2).length;
      expect(repeated).toBeLessThanOrEqual(2 * EVERY);
      expect(done).toMatchObject({ attempts: 1, result: { processed: ITEMS } });
      await db.close();
    }, 120_000);

    it("SIGSTOP past the stale window › recovered and resumed elsewhere; after SIGCONT the stale owner's next checkpoint is refused CLAIM_LOST; the job ends done once", async () => {
      const log = join(tempDir(), "items.log");
      const { env, db } = await prepared(target, { ...FAST, E2E_ITEM_LOG: log });
      const pair = [startWorker(env), startWorker(env)];
      await Promise.all(pair.map((w) => w.ready));
      const id = await db.enqueue("e2e.walk", { items: 600, every: 20, itemMs: 5 });
      await waitFor(() => count(log, "cp") >= 2, 30_000, "two checkpoints");
      const owner = (await db.getJob(id))?.workerId;
      const victim = pair.find((w) => workerIdOf(w) === owner);
      const survivor = pair.find((w) => w !== victim);
      if (!victim || !survivor) throw new Error(`no started worker is ${owner}`);
      stopOutsideWriteLock(victim.child, env);
      // Recovered by the survivor's maintenance and resumed there from the last checkpoint.
      await waitFor(() => count(log, "start") === 2, 30_000, "the run on the survivor");
      await waitFor(() => count(log, "cp") >= 4, 30_000, "checkpoints on the survivor");
      victim.child.kill("SIGCONT");
      await waitFor(() => count(log, "lost") === 1, 30_000, "the stale owner's refused checkpoint");
      const done = await waitFor(
        async () => {
          const job = await db.getJob(id);
          return job?.status === "done" ? job : null;
        },
        60_000,
        "done",
      );
      const lost = readFileSync(log, "utf8")
        .split("\n")
        .find((l) => l.startsWith("lost "));
      expect(lost?.split(" ")[3]).toBe("CLAIM_LOST");
      expect(done).toMatchObject({ workerId: workerIdOf(survivor), result: { processed: 600 } });
      const seen = new Set(
        lines(log)
          .filter(([k]) => k === "item")
          .map(([, v]) => v),
      );
      expect(seen.size).toBe(600);
      for (const w of pair) w.child.kill("SIGTERM");
      await Promise.all(pair.map((w) => w.exited));
      await db.close();
    }, 120_000);

    it("SIGKILL during an effect step › the next worker freezes the job and never runs the step again; `soniq jobs resolve-step --done` finishes it", async () => {
      const log = join(tempDir(), "items.log");
      const gate = join(tempDir(), "gate");
      const { env, db } = await prepared(target, { ...FAST, E2E_ITEM_LOG: log });
      const id = await db.enqueue("e2e.effect", { path: gate });
      const first = startWorker(env);
      await first.ready;
      await waitFor(() => count(log, "effect") === 1, 30_000, "the effect step running");
      first.child.kill("SIGKILL");
      await first.exited;
      writeFileSync(gate, ""); // a re-run of the step would end at once: it must not happen
      const second = startWorker(env);
      await second.ready;
      const frozen = await waitFor(
        async () => {
          const job = await db.getJob(id);
          return job?.status === "queued" && job.lastError?.startsWith("frozen") ? job : null;
        },
        30_000,
        "frozen",
      );
      expect(frozen.scheduledAt.getUTCFullYear()).toBe(9999);
      expect(frozen.attempts).toBe(0);
      expect(count(log, "effect")).toBe(1);
      // `soniq jobs show` says which step is frozen.
      const show = await runCli(["jobs", "show", id], env);
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toContain("steps       charge frozen");
      expect(show.stdout).toContain("step — charge: frozen");
      // --json: the steps and the timeline's step entry (docs/schemas/job-detail.schema.json).
      const shown = await runCli(["jobs", "show", id, "--json"], env);
      expect(shown.code, shown.stderr).toBe(0);
      const detail = JSON.parse(shown.stdout) as {
        steps: Array<{ name: string; state: string; at: string | null }>;
        timeline: Array<{ kind: string; detail: string | null }>;
      };
      expect(detail.steps).toEqual([{ name: "charge", state: "frozen", at: expect.any(String) }]);
      expect(detail.timeline.filter((e) => e.kind === "step").map((e) => e.detail)).toEqual([
        "charge: frozen",
      ]);
      // The operator's answer, from the CLI: exactly one of --done / --rerun.
      const both = await runCli(["jobs", "resolve-step", id, "charge", "--done", "--rerun"], env);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain("INVALID_OPTION");
      const resolved = await runCli(
        ["jobs", "resolve-step", id, "charge", "--done", '"charged elsewhere"', "--json"],
        env,
      );
      expect(resolved.code, resolved.stderr).toBe(0);
      expect(JSON.parse(resolved.stdout)).toEqual({ id, state: "queued" });
      const done = await waitFor(
        async () => {
          const job = await db.getJob(id);
          return job?.status === "done" ? job : null;
        },
        30_000,
        "done",
      );
      expect(done.result).toBe("charged elsewhere");
      expect(count(log, "effect")).toBe(1);
      second.child.kill("SIGTERM");
      expect((await second.exited).code).toBe(0);
      await db.close();
    }, 120_000);
  });
}
