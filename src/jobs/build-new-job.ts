/**
 * Turns an enqueue call into the row to insert: validates the arguments against the job's schema
 * (the input is stored as given), the payload size, queue, priority, attempts, timing and dedup
 * key, and fills defaults from the job definition and the instance settings.
 */
import type { NewJob } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import type { SoniqSettings } from "../settings.js";
import { assertConcurrencyKey, concurrencyMeta } from "./concurrency.js";
import {
  assertDedupKey,
  assertKnownOptions,
  assertMaxAttempts,
  assertPriority,
  assertQueue,
  type EnqueueOptions,
  resolveTiming,
} from "./enqueue-options.js";
import { type JobDefinition, validateArgs } from "./job-definition.js";
import { newJobId } from "./job-id.js";
import { argsDedupKey, toJsonText } from "./payload.js";
import { rateWindowMs } from "./rate-limit.js";

/**
 * The row for one enqueue of `name` (defined by `definition`, or null for a job another service
 * defines). Writes nothing.
 * @throws SoniqError `INVALID_ARGS`, `INVALID_PAYLOAD`, `INVALID_ENQUEUE_OPTION`.
 */
export async function buildNewJob(
  settings: Pick<SoniqSettings, "maxAttempts" | "maxPayloadBytes">,
  definition: JobDefinition<unknown, unknown, unknown> | null,
  name: string,
  args: unknown,
  options: EnqueueOptions,
): Promise<NewJob> {
  assertKnownOptions(options);
  if (definition?.argsSchema) {
    // The input is stored as given; the handler gets the schema's output when it runs.
    const checked = await validateArgs(definition.argsSchema, args);
    if (!checked.ok)
      throw new SoniqError("INVALID_ARGS", `arguments of ${name}: ${checked.message}`);
  }
  const text = toJsonText(args, `arguments of ${name}`, settings.maxPayloadBytes);
  const timing = resolveTiming(options);
  const queue = options.queue ?? definition?.queue ?? "default";
  assertQueue(queue);
  const priority = options.priority ?? definition?.priority ?? 0;
  assertPriority(priority);
  const maxAttempts = options.maxAttempts ?? definition?.maxAttempts ?? settings.maxAttempts;
  assertMaxAttempts(maxAttempts);
  let dedupKey: string | null = null;
  if (options.dedupKey !== undefined) {
    assertDedupKey(options.dedupKey);
    dedupKey = options.dedupKey;
  } else if (options.uniqueByArgs ?? definition?.uniqueByArgs ?? false) {
    dedupKey = argsDedupKey(name, JSON.parse(text));
  }
  let meta: string | undefined;
  if (
    options.concurrencyKey !== undefined ||
    definition?.concurrency !== undefined ||
    definition?.rateLimit !== undefined
  ) {
    const concurrency = definition?.concurrency;
    const rateLimit = definition?.rateLimit;
    if (concurrency === undefined && rateLimit === undefined) {
      throw new SoniqError(
        "INVALID_ENQUEUE_OPTION",
        `concurrencyKey: job ${name} declares no concurrency or rateLimit (give soniq.job({ concurrency: { key, limit } }))`,
      );
    }
    const key =
      options.concurrencyKey ??
      (concurrency !== undefined
        ? concurrency.key(args)
        : rateLimit?.key !== undefined
          ? rateLimit.key(args)
          : name);
    assertConcurrencyKey(
      key,
      options.concurrencyKey !== undefined ? "concurrencyKey" : `concurrency key of ${name}`,
    );
    meta = concurrencyMeta({
      key,
      limit: concurrency?.limit,
      rate:
        rateLimit === undefined
          ? undefined
          : { limit: rateLimit.limit, perMs: rateWindowMs(rateLimit.per) },
    });
  }
  return {
    id: newJobId(),
    name,
    queue,
    args: text,
    priority,
    maxAttempts,
    runAt: timing.runAt,
    delaySeconds: timing.delaySeconds,
    dedupKey,
    version: definition?.version ?? 1,
    ...(meta === undefined ? {} : { meta }),
  };
}
