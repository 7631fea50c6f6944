/**
 * The refusal of a seal of an open batch that has no member yet (docs/workflows.md, "Batches":
 * a sealed batch needs at least one member), the same on every backend.
 */
import { SoniqError } from "../../errors.js";

/**
 * `INVALID_STATE` for open batch `id` sealed with no member: sealing it would release its
 * callbacks with nothing to wait for. Nothing is written; add a member, then seal.
 */
export function emptyBatch(id: string): SoniqError {
  return new SoniqError(
    "INVALID_STATE",
    `batch ${id} has no member: add one before sealing it (a sealed batch needs at least one)`,
  );
}
