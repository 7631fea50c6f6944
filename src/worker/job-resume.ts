/**
 * A running job's checkpoint and durable steps (docs/checkpoints.md): what `ctx.checkpoint`,
 * `ctx.resume` and `ctx.step` do on the worker's side. One {@link JobResume} per job that uses
 * them, created on first use (a job that never checkpoints creates none and writes nothing).
 *
 * Write policy: at most one write per job is in flight; calls made while one is in flight are
 * coalesced into the next write (the latest checkpoint wins, the steps' records are written
 * whole). Every returned promise resolves once a write carrying its change (or a later one) is
 * durable, and rejects when that write failed. Each write is fenced by the claim's owner and
 * token (`JobStore.jobCheckpoint`): refused, it rejects with `SoniqError("CLAIM_LOST")` and aborts
 * the handler's `ctx.signal` with that error; every later call rejects the same way.
 */
import type { JobCheckpointParams, JobResumeState, Owner } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { StepDecision, StepOptions } from "../jobs/context.js";
import { toJsonText } from "../jobs/payload.js";
import type { LazyAbortController } from "./lazy-abort-controller.js";

/** Longest step name, in characters. */
export const MAX_STEP_NAME_LENGTH = 200;

/** What the job resume needs from its worker. */
export interface ResumeDeps {
  /** The fenced write (the backend's `jobCheckpoint`). */
  write(params: JobCheckpointParams): Promise<boolean>;
  /** `maxPayloadBytes`: the largest checkpoint, and the largest steps' records, in bytes. */
  maxPayloadBytes: number;
}

/**
 * One step's durable record: `running` (an effect step started), `done` (`r`: its result),
 * `frozen` (its outcome unknown); `t`: when it reached that state, epoch ms by the clock of the
 * process that wrote it (the job timeline's; absent in records written before it was kept).
 */
export interface StepRecord {
  s: "running" | "done" | "frozen";
  r?: unknown;
  t?: number;
}

/** The steps' records of a job, by step name (stored as one JSON text). */
export type StepRecords = Record<string, StepRecord>;

/** Thrown (and recorded) when an effect step's outcome is unknown: the job is frozen. */
function outcomeUnknown(name: string): SoniqError {
  return new SoniqError(
    "STEP_OUTCOME_UNKNOWN",
    `effect step "${name}" was running when an earlier attempt ended (crash or drain deadline): its outcome is unknown, so it is not run again; the job is frozen until an operator resolves the step (soniq.jobs.resolveStep) or cancels the job`,
  );
}

/** Parses stored JSON text, or undefined for none (or unreadable text: a hand-edited row). */
function parseOr<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** The parsed checkpoint of a resume state: `ctx.resume` (undefined when none). */
export function resumeValue(state: JobResumeState | undefined): unknown {
  return parseOr<unknown>(state?.checkpoint, undefined);
}

/** See the module comment. */
export class JobResume {
  private readonly steps: StepRecords;
  private readonly used = new Set<string>();
  private checkpointText: string | undefined;
  private stepsDirty = false;
  /** The write that will carry the next change (not started yet), if any. */
  private scheduled: Promise<void> | undefined;
  /** The latest write started (or scheduled). */
  private last: Promise<void> = Promise.resolve();
  private lost: SoniqError | undefined;
  /** Set when an effect step's outcome was found unknown: the run ends frozen. */
  frozenStep: string | undefined;

  /**
   * @param owner - the claim (fence of every write).
   * @param controller - the job's stop controller: aborted with `CLAIM_LOST` when a write is
   *   refused.
   */
  constructor(
    private readonly id: string,
    private readonly owner: Owner,
    state: JobResumeState | undefined,
    private readonly controller: LazyAbortController,
    private readonly deps: ResumeDeps,
  ) {
    this.steps = parseOr<StepRecords>(state?.steps, {});
  }

  /** The steps' records as JSON text, the frozen step marked (for the freeze write). */
  frozenStepsText(): string {
    const name = this.frozenStep;
    const steps =
      name === undefined ? this.steps : { ...this.steps, [name]: { s: "frozen", t: Date.now() } };
    return JSON.stringify(steps);
  }

  /**
   * `ctx.checkpoint(state)`.
   * @throws SoniqError `INVALID_PAYLOAD` (rejects) for a state that is not plain JSON or is
   *   larger than `maxPayloadBytes`; `CLAIM_LOST` when the claim is no longer this worker's.
   */
  checkpoint(state: unknown): Promise<void> {
    if (this.lost) return Promise.reject(this.lost);
    let text: string;
    try {
      text = toJsonText(state, "ctx.checkpoint(state)", this.deps.maxPayloadBytes);
    } catch (err) {
      return Promise.reject(err);
    }
    this.checkpointText = text;
    return this.request();
  }

  /** `ctx.step(name, fn, options)`: see `JobContext.step`. */
  async step<T>(name: string, fn: () => T | Promise<T>, options: StepOptions<T> = {}): Promise<T> {
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_LENGTH) {
      throw new SoniqError(
        "INVALID_ARGS",
        `ctx.step(name, fn): name must be a string of 1 to ${MAX_STEP_NAME_LENGTH} characters`,
      );
    }
    if (typeof fn !== "function") {
      throw new SoniqError("INVALID_ARGS", `ctx.step("${name}", fn): fn must be a function`);
    }
    checkStepOptions(name, options);
    if (this.used.has(name)) {
      throw new SoniqError(
        "DUPLICATE_STEP",
        `ctx.step("${name}"): a step of this name already ran in this attempt; step names are unique per job`,
      );
    }
    this.used.add(name);
    if (this.lost) throw this.lost;
    const record = this.steps[name];
    if (record?.s === "done") return record.r as T;
    const effect = options.effect === true;
    if (record !== undefined && effect) {
      let decision: StepDecision<T>;
      try {
        decision = options.reconcile ? await options.reconcile() : undefined;
      } catch {
        decision = undefined; // cannot tell: frozen
      }
      if (decision !== undefined && "done" in decision) {
        await this.recordDone(name, decision.done);
        return decision.done;
      }
      if (decision === undefined || decision.rerun !== true) {
        this.frozenStep = name;
        throw outcomeUnknown(name);
      }
    }
    if (effect) {
      this.setStep(name, { s: "running", t: Date.now() });
      await this.request();
    }
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      // A throw is a definite answer (the effect did not happen): the next attempt runs it again.
      if (effect && this.steps[name]?.s === "running") {
        delete this.steps[name];
        this.stepsDirty = true;
        await this.request().catch(() => undefined);
      }
      throw err;
    }
    await this.recordDone(name, value);
    return value;
  }

  private async recordDone(name: string, value: unknown): Promise<void> {
    const what = `result of step "${name}"`;
    const t = Date.now();
    const record: StepRecord =
      value === undefined
        ? { s: "done", t }
        : { s: "done", r: JSON.parse(toJsonText(value, what, this.deps.maxPayloadBytes)), t };
    const before = this.steps[name];
    this.steps[name] = record;
    const size = Buffer.byteLength(JSON.stringify(this.steps), "utf8");
    if (size > this.deps.maxPayloadBytes) {
      if (before === undefined) delete this.steps[name];
      else this.steps[name] = before;
      throw new SoniqError(
        "INVALID_PAYLOAD",
        `${what}: the job's step results would take ${size} bytes of JSON, over the limit of ${this.deps.maxPayloadBytes} bytes (maxPayloadBytes)`,
      );
    }
    this.stepsDirty = true;
    await this.request();
  }

  private setStep(name: string, record: StepRecord): void {
    this.steps[name] = record;
    this.stepsDirty = true;
  }

  /** A write carrying every change made so far; coalesced (see the module comment). */
  private request(): Promise<void> {
    if (this.scheduled) return this.scheduled;
    const next = this.last.then(
      () => this.writeNow(),
      () => this.writeNow(),
    );
    this.scheduled = next;
    this.last = next;
    // A call the handler did not await must not become an unhandled rejection (a write fenced out
    // after the job finished, say); an awaited one still rejects.
    next.catch(() => undefined);
    return next;
  }

  private async writeNow(): Promise<void> {
    this.scheduled = undefined;
    if (this.lost) throw this.lost;
    const checkpoint = this.checkpointText;
    const steps = this.stepsDirty ? JSON.stringify(this.steps) : undefined;
    this.checkpointText = undefined;
    this.stepsDirty = false;
    if (checkpoint === undefined && steps === undefined) return;
    const params: JobCheckpointParams = { id: this.id, owner: this.owner };
    if (checkpoint !== undefined) params.checkpoint = checkpoint;
    if (steps !== undefined) params.steps = steps;
    let written: boolean;
    try {
      written = await this.deps.write(params);
    } catch (err) {
      // Not durable: offered again with the next write.
      if (checkpoint !== undefined && this.checkpointText === undefined) {
        this.checkpointText = checkpoint;
      }
      if (steps !== undefined) this.stepsDirty = true;
      throw err;
    }
    if (!written) {
      this.lost = new SoniqError(
        "CLAIM_LOST",
        `job ${this.id}: this worker no longer holds the claim (recovered, cancelled or finished elsewhere); the checkpoint or step was not written`,
      );
      this.controller.abort(this.lost);
      throw this.lost;
    }
  }
}

/**
 * Refuses step options that would silently drop the protection asked for: a misspelt key (an
 * `effekt: true` step would run again after a crash), an `effect` that is not a boolean, a
 * `reconcile` that is not a function or is given without `effect: true` (only an effect step is
 * ever reconciled).
 * @throws SoniqError `INVALID_ARGS`.
 */
function checkStepOptions(name: string, options: unknown): void {
  const bad = (why: string) =>
    new SoniqError("INVALID_ARGS", `ctx.step("${name}", fn, options): ${why}`);
  if (options === null || typeof options !== "object") throw bad("options must be an object");
  for (const key of Object.keys(options)) {
    if (key !== "effect" && key !== "reconcile") {
      throw bad(`unknown option "${key}" (known: effect, reconcile)`);
    }
  }
  const { effect, reconcile } = options as StepOptions<unknown>;
  if (effect !== undefined && typeof effect !== "boolean") throw bad("effect must be a boolean");
  if (reconcile !== undefined && typeof reconcile !== "function") {
    throw bad("reconcile must be a function");
  }
  if (reconcile !== undefined && effect !== true) {
    throw bad("reconcile is asked only of an effect step: give effect: true");
  }
}
