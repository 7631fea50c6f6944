/**
 * The adapter interface that keeps workloads library-agnostic. One factory per library (and
 * storage); a fresh adapter per measurement, so no connection, timer or poller of one
 * measurement lives on into the next.
 */
import type { HistoryFill, OperatorApi } from "../history.js";
import type { BenchHandler, BenchPayload } from "../payload.js";

/** Keys of the `flow` workload's keyed jobs (payload `i` modulo this). */
export const FLOW_KEYS = 1000;
/** Jobs of one key the `flow` workload's keyed jobs let run at once. */
export const FLOW_LIMIT = 2;

/** How to start a separate worker process of a library (for the SIGTERM and RSS workloads). */
export interface WorkerProcessSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** One library, connected. */
export interface Adapter {
  /** Connects, creates what is missing and leaves the library with no queued jobs. */
  setup(): Promise<void>;
  /** Enqueues the batch with the library's bulk API (one call). */
  enqueueBulk(batch: BenchPayload[]): Promise<void>;
  /**
   * The `flow` workload: enqueues the batch (one bulk call) as jobs of a definition with a per-key
   * concurrency limit, {@link FLOW_LIMIT} per key over {@link FLOW_KEYS} keys (payload `i` modulo
   * the keys), run by the same worker and handler. Absent: not measured.
   */
  enqueueBulkKeyed?(batch: BenchPayload[]): Promise<void>;
  /** Enqueues one job with the library's single-job API. */
  enqueueOne(payload: BenchPayload): Promise<void>;
  /** Starts an in-process worker that runs at most `concurrency` handlers at once. */
  startWorker(concurrency: number, handler: BenchHandler): Promise<void>;
  /** Stops the worker gracefully (in-flight handlers finish). */
  stopWorker(): Promise<void>;
  /** A separate worker process for this adapter's storage, with `concurrency` slots. */
  workerProcess(concurrency: number): WorkerProcessSpec;
  /** Closes connections; the storage stays for the next adapter of the library. */
  teardown(): Promise<void>;
  /**
   * The `history` workload: writes `size` finished jobs the way the library stores them into this
   * adapter's storage, next to what is there (../history.ts). Absent: not measured.
   */
  fillHistory?(size: number): Promise<HistoryFill>;
  /** Soniq's operator API on this adapter's instance (the history workload's reads); Soniq only. */
  operatorApi?(): OperatorApi;
  /**
   * The `fanin` workload (../workloads/fan-in.ts): enqueues (untimed) one waiting job over
   * `children` no-op children, starts an in-process worker with `concurrency` slots and returns
   * the seconds from the first child's handler start to the waiting job's handler end; stops the
   * worker. Rejects after `timeoutMs`. Absent: not measured (a library without dependencies).
   */
  fanIn?(children: number, concurrency: number, timeoutMs: number): Promise<number>;
}

/** One library as the orchestrator sees it. */
export interface AdapterFactory {
  /** Short id used on the command line (`soniq-pg`). */
  readonly name: string;
  /** Column heading (`Soniq PG`). */
  readonly label: string;
  /**
   * Whether this is one of this checkout's Soniq backends (the rows compare these with the best
   * peer).
   */
  readonly isSoniq: boolean;
  /**
   * For a `--baseline` build of Soniq: the name of this checkout's factory it is compared with
   * (`soniq-pg`). Neither a peer nor one of `isSoniq`.
   */
  readonly baselineOf?: string | undefined;
  /** Package version measured. */
  version(): string;
  /** The configuration used, for the report. */
  readonly configuration: string;
  /**
   * Where its data lives, for the database CPU rows (../cpu-meter.ts): the PostgreSQL backends
   * serving the worker, the Redis server, or nothing separate (SQLite runs inside the worker, so
   * its cost is in the worker's CPU).
   */
  readonly database: "postgres" | "redis" | "in-process";
  /** `null` when the library can run here; otherwise why not (e.g. Redis is down). */
  check(): Promise<string | null>;
  /** Before the first round: removes leftovers of an earlier run and creates the storage. */
  prepare(): Promise<void>;
  /** A new, unconnected adapter. */
  create(): Adapter;
  /** Why the `history` workload does not measure this library (its adapters have no `fillHistory`). */
  readonly historyNotMeasured?: string;
  /** After the last round: drops every schema, key or file the library used. */
  cleanup(): Promise<void>;
}
