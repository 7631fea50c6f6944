/**
 * What the contract areas share: the target the suite runs on, the context each area receives, a
 * job builder and the multi-process claimer.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Backend, NewJob, Owner } from "../../src/backends/contract/index.js";

/** The backends of one kind the suite runs on. */
export interface ContractTarget {
  /** Names the describe block. */
  label: string;
  /** A fresh, set-up, empty store, closed after the test. */
  make(): Promise<Backend>;
  /** For multi-process cases: the createBackend options that reach the same store as `backend`. */
  share?(backend: Backend): { databaseUrl: string; schema: string };
}

/** What each area receives from the runner. */
export interface ContractContext {
  /** A fresh, set-up backend, closed after the test. */
  make(): Promise<Backend>;
  /** The target itself (for cases that manage a backend's life on their own). */
  target: ContractTarget;
}

/** A valid {@link NewJob} due now on queue `default`, with `overrides`. */
export function newJob(overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    name: "test.job",
    queue: "default",
    args: "{}",
    priority: 0,
    maxAttempts: 3,
    runAt: null,
    delaySeconds: 0,
    dedupKey: null,
    ...overrides,
  };
}

/** Claims up to `limit` due jobs of every queue as worker `w` (not registered). */
export function claimDue(b: Backend, limit = 1) {
  return b.jobClaim({ workerId: "w", queues: null, limit });
}

/** The claim's owner of a claimed job. */
export function ownerOf(job: { workerId: string; claimToken: string }): Owner {
  return { workerId: job.workerId, claimToken: job.claimToken };
}

const claimerScript = fileURLToPath(new URL("./claimer-process.ts", import.meta.url));

/** A claimer child process: ready once connected, claims on `go()`, resolves with its ids. */
export interface Claimer {
  ready: Promise<void>;
  go(): void;
  ids: Promise<string[]>;
}

/** Starts a claimer process on the store `databaseUrl` / `schema` names. */
export function startClaimer(databaseUrl: string, schema: string, workerId: string): Claimer {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", claimerScript, databaseUrl, schema, workerId],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.includes("ready\n")) markReady();
  });
  const ids = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      markReady();
      if (code !== 0) reject(new Error(`claimer ${workerId} exited ${code}: ${err}`));
      else resolve(out.split("\n").filter((line) => line.length > 0));
    });
  });
  return { ready, go: () => child.stdin.end("go\n"), ids };
}
