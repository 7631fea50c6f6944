/**
 * The guard a backend without a capability puts in front of the option that needs it.
 */
/**
 * Guards a backend without `capabilities.transactionalEnqueue` against a caller that skipped the
 * check (the caller raises `SoniqError("UNSUPPORTED")`; reaching this is a bug).
 * @throws Error when `connection` is set.
 */
export function assertNoConnection(kind: string, connection: unknown): void {
  if (connection !== undefined) {
    throw new Error(
      `bug: a transactional enqueue reached the ${kind} backend; callers check capabilities.transactionalEnqueue`,
    );
  }
}
