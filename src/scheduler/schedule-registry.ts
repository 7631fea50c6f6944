/**
 * The schedules one Soniq instance declares in code, by id, with the instance's schedule admin
 * and the listeners (a worker's scheduler) told when that admin changes a schedule.
 */
import type { Backend } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import type { Logger } from "../observability/logger.js";
import { ScheduleAdmin } from "./admin.js";
import { ScheduleDefinition, type ScheduleOptions } from "./schedule-definition.js";

/** What {@link ScheduleRegistry} needs from its instance. */
export interface ScheduleRegistryOptions {
  /** The `maxPayloadBytes` setting (bytes), applied to each schedule's arguments. */
  maxPayloadBytes: number;
  backend(): Promise<Backend>;
  logger: Logger;
}

/** See the module comment. */
export class ScheduleRegistry {
  private readonly byId = new Map<string, ScheduleDefinition>();
  private readonly listeners = new Set<() => void>();
  private scheduleAdmin: ScheduleAdmin | undefined;

  constructor(private readonly options: ScheduleRegistryOptions) {}

  /**
   * Declares a schedule (nothing is written; see `Soniq.schedule`).
   * @param isRegistered - whether the schedule's job is defined on this instance.
   * @throws SoniqError `INVALID_SCHEDULE`, `DUPLICATE_SCHEDULE`, `INVALID_ARGS`,
   * `INVALID_PAYLOAD`, `INVALID_ENQUEUE_OPTION`.
   */
  declare(
    options: ScheduleOptions<unknown, unknown, unknown>,
    isRegistered: (job: JobDefinition<unknown, unknown, unknown>) => boolean,
  ): ScheduleDefinition {
    const definition = new ScheduleDefinition(options, this.options.maxPayloadBytes, isRegistered);
    if (this.byId.has(definition.spec.id)) {
      throw new SoniqError(
        "DUPLICATE_SCHEDULE",
        `a schedule with id ${definition.spec.id} is already defined in this instance`,
        { details: { schedule: definition.spec.id } },
      );
    }
    this.byId.set(definition.spec.id, definition);
    return definition;
  }

  /** The declared schedules, by id. */
  get definitions(): ReadonlyMap<string, ScheduleDefinition> {
    return this.byId;
  }

  /** The instance's schedule admin, created on first use; its changes reach the listeners. */
  get admin(): ScheduleAdmin {
    this.scheduleAdmin ??= new ScheduleAdmin({
      backend: this.options.backend,
      logger: this.options.logger,
      definitions: () => this.byId.values(),
      changed: () => {
        for (const listener of this.listeners) listener();
      },
    });
    return this.scheduleAdmin;
  }

  /** Subscribes to changes made through {@link admin}; returns the unsubscribe function. */
  onChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
