/**
 * A lane: background calls that share one database connection's worth of concurrency, one at a
 * time, first come first served. The leader's maintenance services (the rescuer, the pruner, the
 * worker reaper, the waiting watch, the flow-ends reporter, the queue sampler) send their
 * statements through one lane (maintenance.ts; docs/reliability.md, "Maintenance: small services
 * behind one lease"), so a maintenance tick adds at most one statement in flight to the pool beside
 * the hot path's claims and completions, instead of one per service at once — each of which would
 * have made the pool open a connection, and each new connection pays the server's warm-up
 * (docs/performance.md, "Database CPU per job in the real drain").
 *
 * Waiting is per call, not per tick: a service whose tick makes many calls (the pruner's batches)
 * lets the others' calls in between its own, so a call waits at most for the calls queued before
 * it — one per other service, since each service's tick makes its calls one after another.
 */

/** Runs calls one at a time in the order they were made. See the module comment. */
export class Lane {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;
  /** Bumped by {@link drop}: a call made before it and not yet started does not start. */
  private generation = 0;

  /** Calls made and not yet settled (the one running included). */
  get pending(): number {
    return this.queued;
  }

  /**
   * Runs `call` once every call made before it has settled; resolves or rejects as it does. A
   * failed call does not hold up the next one.
   * @throws {@link LaneDroppedError} when {@link drop} was called while it waited (it never ran).
   */
  run<T>(call: () => Promise<T>): Promise<T> {
    this.queued += 1;
    const generation = this.generation;
    const result = this.tail
      .then(() => {
        if (generation !== this.generation) throw new LaneDroppedError();
        return call();
      })
      .finally(() => {
        this.queued -= 1;
      });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Calls still waiting their turn will not run: each rejects with {@link LaneDroppedError} when
   * its turn comes. The call running goes on; calls made afterwards run as usual. What the
   * maintainer does when it stops its services, so that a call queued before the stop does not
   * reach the database after it (after the backend closed, it would meet `CLOSED`).
   */
  drop(): void {
    this.generation += 1;
  }
}

/** A call a {@link Lane} dropped before it ran (its services are stopping). */
export class LaneDroppedError extends Error {
  constructor() {
    super("not run: the maintenance services are stopping");
    this.name = "LaneDroppedError";
  }
}

/** The stores of a backend reached as members (contract: backend.ts): their calls are laned too. */
const NESTED_STORES: ReadonlySet<PropertyKey> = new Set(["admin", "flows", "submissions"]);

/**
 * A view of `store` whose method calls run in `lane` (each one queued, then called on `store`
 * itself); the members named `admin`, `flows` and `submissions` are such views in turn. Other
 * members (the notifier, the hand-off desk, `kind`) are `store`'s own. For callers that call only
 * asynchronous methods through it, as the maintenance services do: a synchronous method called
 * through the view returns a promise of its result.
 */
export function laned<T extends object>(store: T, lane: Lane): T {
  return view(store, lane, NESTED_STORES);
}

function view<T extends object>(store: T, lane: Lane, nested: ReadonlySet<PropertyKey>): T {
  const members = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const known = members.get(key);
      if (known !== undefined) return known;
      const value: unknown = Reflect.get(target, key, target);
      let member: unknown = value;
      if (typeof value === "function") {
        member = (...args: unknown[]) =>
          lane.run(() => Promise.resolve(Reflect.apply(value, target, args)));
      } else if (nested.has(key) && typeof value === "object" && value !== null) {
        member = view(value, lane, new Set());
      } else {
        return value;
      }
      members.set(key, member);
      return member;
    },
  });
}
