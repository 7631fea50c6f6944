/**
 * The chaos run's remote checks (chaos/remote-report.ts) on synthetic inputs: log lines in the
 * worker's exact words are counted as hand-offs, releases and freezes; a second POST under a key
 * is allowed only after a notSubmitted answer for its job; orphaned task ids and unexplained ends
 * fail the run.
 */
import { describe, expect, it } from "vitest";
import {
  analyzeRemote,
  countRemoteLines,
  type RemoteJobState,
  type RemoteLogCounts,
} from "../../chaos/remote-report.js";
import { REMOTE_JOB, remoteSpec } from "../../chaos/remote-workload.js";

const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 40, ...fields });
const empty = (): RemoteLogCounts => ({
  handoffs: {},
  frozen: new Map(),
  reconcileNotSubmitted: new Map(),
  reconcileAccepted: 0,
});
const job = (id: string, n: number, extra: Partial<RemoteJobState> = {}): RemoteJobState => ({
  id,
  n,
  name: REMOTE_JOB,
  status: "done",
  deadReason: null,
  phase: "finished",
  taskId: `t-${id}`,
  generation: 1,
  owner: null,
  ...extra,
});
const operator = { accepted: [], notSubmitted: [], reconcilableLeft: [], refused: [], settleMs: 1 };
const byName = (checks: Array<{ name: string; value: string; ok?: boolean }>, prefix: string) =>
  checks.find((c) => c.name.startsWith(prefix));

describe("chaos remote report", () => {
  it("countRemoteLines › the worker's and the rescuer's words › hand-offs, releases, freezes and reconciles counted once each", () => {
    const logs = empty();
    countRemoteLines(
      [
        line({
          job_id: "a",
          phase: "frozen",
          handoff_action: "freeze",
          msg: "remote submission frozen (deadline): it is never resubmitted on its own; reconcile or `soniq remote resolve`",
        }),
        line({
          job_id: "a",
          phase: "submitting",
          handoff_action: "freeze",
          msg: "remote job frozen (deadline)",
        }),
        line({
          job_id: "b",
          phase: "submitting",
          handoff_action: "freeze",
          msg: "recovered a remote job whose worker died while submitting: frozen (never resubmitted on its own)",
        }),
        line({
          job_id: "c",
          phase: "accepted",
          handoff_action: "handoff",
          msg: "recovered a remote job whose worker died while polling: handed to polling, due now",
        }),
        line({
          job_id: "d",
          phase: "accepted",
          handoff_action: "handoff",
          msg: "remote job handed to polling (deadline)",
        }),
        line({
          job_id: "e",
          phase: "claimed",
          handoff_action: "release",
          msg: "remote job released (draining)",
        }),
        line({
          job_id: "b",
          phase: "released",
          handoff_action: "release",
          msg: "reconciled: not submitted; released to be submitted again with the same idempotency key",
        }),
        line({
          job_id: "a",
          phase: "accepted",
          handoff_action: "handoff",
          msg: "reconciled: the provider has the task; handed to polling",
        }),
        "not json at all",
      ],
      logs,
    );
    expect(logs.handoffs).toEqual({
      "freeze deadline": 1,
      "freeze crash": 1,
      "handoff crash": 1,
      "handoff deadline": 1,
      "release draining": 1,
    });
    expect([...logs.frozen]).toEqual([
      ["a", ["deadline"]],
      ["b", ["crash"]],
    ]);
    expect([...logs.reconcileNotSubmitted]).toEqual([["b", 1]]);
    expect(logs.reconcileAccepted).toBe(1);
  });

  it("analyzeRemote › a second POST after notSubmitted passes; one without, an orphaned task, a job left queued › three must-be-zero checks fail", () => {
    const seed = 7;
    const logs = empty();
    logs.reconcileNotSubmitted.set("ok2", 1);
    const clean = analyzeRemote({
      seed,
      jobs: [job("ok1", 0), job("ok2", 1)],
      provider: {
        posts: [
          ["ok1:1", 1],
          ["ok2:1", 2],
        ],
        tasks: [
          { id: "t-ok1", key: "ok1:1" },
          { id: "t-ok2", key: "ok2:1" },
        ],
      },
      logs,
      operator,
    });
    expect(clean.failed).toEqual([]);
    expect(byName(clean.checks, "remote: duplicate POSTs")?.value).toBe(
      "0 (+1 after notSubmitted, same key)",
    );

    const bad = analyzeRemote({
      seed,
      jobs: [job("dup", 0), job("orph", 1, { taskId: null }), job("left", 2, { status: "queued" })],
      provider: {
        posts: [
          ["dup:1", 2],
          ["orph:1", 1],
        ],
        tasks: [
          { id: "t-dup", key: "dup:1" },
          { id: "t-orph", key: "orph:1" },
        ],
      },
      logs: empty(),
      operator,
    });
    expect(bad.failed).toEqual([
      "remote: duplicate POSTs per idempotency key (must be 0)",
      "remote: orphaned task ids (must be 0)",
      "remote: jobs neither done nor explainable (must be 0)",
    ]);
  });

  it("analyzeRemote › a dead letter remote_failed › explained only when the plan made its task fail", () => {
    const seed = 11;
    let planned = -1;
    let unplanned = -1;
    for (let n = 0; n < 2000 && (planned < 0 || unplanned < 0); n++) {
      const failedTask = remoteSpec(seed, n).args.behaviour.outcome === "failed";
      if (failedTask && planned < 0) planned = n;
      if (!failedTask && unplanned < 0) unplanned = n;
    }
    const dead = { status: "dead_letter", deadReason: "remote_failed" };
    const result = analyzeRemote({
      seed,
      jobs: [job("p", planned, dead), job("u", unplanned, dead)],
      provider: { posts: [], tasks: [] },
      logs: empty(),
      operator,
    });
    expect(byName(result.checks, "remote: jobs neither done")?.value).toBe("1");
    expect(result.details.some((d) => d.includes("job u "))).toBe(true);
  });
});
