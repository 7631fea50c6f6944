/**
 * The job definitions of one Soniq instance, by name: registration (names are unique per
 * instance) and the lookup an enqueue by name makes.
 */
import { SoniqError } from "../errors.js";
import type { JobDefinition } from "./job-definition.js";
import { assertJobName } from "./job-name.js";

type AnyDefinition = JobDefinition<unknown, unknown, unknown>;

/** See the module comment. */
export class JobRegistry {
  private readonly byName = new Map<string, AnyDefinition>();

  /**
   * @param rejectUnknownJobs - the `rejectUnknownJobs` setting: whether {@link definitionFor}
   * refuses a name nobody registered here.
   */
  constructor(private readonly rejectUnknownJobs: boolean) {}

  /** The registered definitions, by name. */
  get definitions(): ReadonlyMap<string, AnyDefinition> {
    return this.byName;
  }

  /**
   * Registers `definition` and returns it.
   * @throws SoniqError `DUPLICATE_JOB` when its name is already registered here.
   */
  add<TArgs, TResult, TInput>(
    definition: JobDefinition<TArgs, TResult, TInput>,
  ): JobDefinition<TArgs, TResult, TInput> {
    if (this.byName.has(definition.name)) {
      throw new SoniqError(
        "DUPLICATE_JOB",
        `a job named ${definition.name} is already defined in this instance`,
      );
    }
    this.byName.set(definition.name, definition as AnyDefinition);
    return definition;
  }

  /** True when `definition` is the one registered here under its name. */
  holds(definition: JobDefinition<unknown, unknown, unknown>): boolean {
    return this.byName.get(definition.name) === definition;
  }

  /**
   * The definition to enqueue `name` with: the registered one, or null for a job another service
   * defines (allowed only when `rejectUnknownJobs` is off).
   * @throws SoniqError `INVALID_JOB_NAME`; `UNKNOWN_JOB` when nothing is registered under `name`
   * and `rejectUnknownJobs` is on.
   */
  definitionFor(name: string): AnyDefinition | null {
    assertJobName(name);
    const definition = this.byName.get(name) ?? null;
    if (!definition && this.rejectUnknownJobs) {
      throw new SoniqError(
        "UNKNOWN_JOB",
        `no job named ${name} is registered in this instance (registered: ${[...this.byName.keys()].join(", ") || "none"}); set rejectUnknownJobs: false to enqueue jobs another service defines`,
      );
    }
    return definition;
  }
}
