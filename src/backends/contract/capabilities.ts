/**
 * What a backend can do beyond the common contract. Callers check these flags (and raise
 * `SoniqError("UNSUPPORTED")` themselves) instead of each backend throwing from inside a method.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */

/** A backend's capabilities. */
export interface Capabilities {
  /** `JobStore.jobEnqueue` accepts `connection`: the insert joins the caller's transaction. */
  readonly transactionalEnqueue: boolean;
  /** The `Notifier` hears writes made by other processes (else only this object's own writes). */
  readonly crossProcessWake: boolean;
  /** Jobs survive the process (false for memory). */
  readonly durable: boolean;
}
