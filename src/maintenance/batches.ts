/** Batched deletes for the maintenance services: repeat a bounded statement until it comes back short. */

/**
 * Runs `batch` (which deletes at most `limit` rows and returns how many it did) until a batch
 * comes back short or `signal` aborts; a stop is honoured between batches, never inside one.
 * @returns The rows deleted in all.
 * @throws Whatever `batch` throws (the rows of earlier batches stay deleted).
 */
export async function inBatches(
  limit: number,
  signal: AbortSignal,
  batch: () => Promise<number>,
): Promise<number> {
  let total = 0;
  while (!signal.aborted) {
    const n = await batch();
    total += n;
    if (n < limit) break;
  }
  return total;
}
