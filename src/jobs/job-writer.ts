/**
 * The write side of enqueueing: builds each job's row (build-new-job.ts: every item validated
 * first, so one bad item writes nothing), then inserts them all in one backend call (one round
 * trip on PostgreSQL, optionally in the caller's transaction), traced when tracing is on, and
 * reports `job_enqueued` for each row actually inserted. Used by `Soniq`'s enqueue methods.
 */
import type { Backend, NewJob, PgQueryable } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Tracing } from "../observability/tracing.js";
import type { SoniqSettings } from "../settings.js";
import { buildNewJob } from "./build-new-job.js";
import type { EnqueueOptions } from "./enqueue-options.js";
import type { JobDefinition } from "./job-definition.js";

/** One job to enqueue. */
export interface JobToWrite {
  /** Its definition (null: a job another service defines), looked up when its turn comes. */
  definition(): JobDefinition<unknown, unknown, unknown> | null;
  name: string;
  args: unknown;
  options: EnqueueOptions;
}

/** What {@link JobWriter} needs from its Soniq instance. */
export interface JobWriterDeps {
  settings: SoniqSettings;
  backend(): Promise<Backend>;
  eventBus: EventBus<SoniqEventMap>;
  tracing: Tracing | undefined;
}

/** See the module comment. */
export class JobWriter {
  constructor(private readonly deps: JobWriterDeps) {}

  /**
   * Builds every job in input order (the first invalid one throws; nothing is written), then
   * writes them in one call. Ids in input order (the existing id for a duplicate).
   * @param connection - PostgreSQL only: the caller's transaction client.
   * @throws SoniqError as `buildNewJob`, and `UNSUPPORTED` (`connection` off PostgreSQL).
   */
  async enqueue(
    items: readonly JobToWrite[],
    connection: PgQueryable | undefined,
  ): Promise<string[]> {
    const jobs: NewJob[] = [];
    for (const item of items) {
      jobs.push(
        await buildNewJob(
          this.deps.settings,
          item.definition(),
          item.name,
          item.args,
          item.options,
        ),
      );
    }
    return jobs.length === 0 ? [] : this.write(jobs, connection);
  }

  private async write(jobs: NewJob[], connection: PgQueryable | undefined): Promise<string[]> {
    const backend = await this.deps.backend();
    if (connection && !backend.capabilities.transactionalEnqueue) {
      throw new SoniqError("UNSUPPORTED", "`connection` (transactional enqueue) needs PostgreSQL");
    }
    const insert = async (traced: readonly NewJob[]): Promise<string[]> => {
      const results = await backend.jobEnqueue(
        connection ? { jobs: traced, connection } : { jobs: traced },
      );
      if (this.deps.eventBus.hasListeners("job_enqueued")) {
        results.forEach((result, i) => {
          const job = traced[i];
          if (result.inserted && job) {
            this.deps.eventBus.emit("job_enqueued", {
              job_id: job.id,
              job_name: job.name,
              queue: job.queue,
            });
          }
        });
      }
      return results.map((r) => r.id);
    };
    return this.deps.tracing ? this.deps.tracing.traceEnqueue(jobs, insert) : insert(jobs);
  }
}
