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
 * it — one per other service, since each service's tick makes its calls one after another — and
 * for none of them longer than the lane's per-call bound ({@link LaneOptions.callBoundMs}): past
 * it, the lane starts the next call beside the late one instead of waiting for a statement stuck
 * on a lock. The late call is not cancelled; its caller still gets its result.
 */

/**
 * Default of {@link LaneOptions.callBoundMs}: 5 s, the default `heartbeatInterval` (the rescuer's
 * interval). The maintenance services' own lane is bounded by their interval instead
 * (maintenance.ts).
 */
export const DEFAULT_LANE_CALL_BOUND_MS = 5_000;

/** Options of a {@link Lane}. */
export interface LaneOptions {
  /**
   * Milliseconds a call may hold the lane. Past them the lane stops waiting for it and starts the
   * next call; the call itself goes on (its statement may still be running on its connection, for
   * instance waiting for a lock) and its promise settles as it does. So a stuck call holds up the
   * calls behind it for at most this long, and the lane has at most one more call in flight per
   * call that overran. `Infinity`: no bound. Default {@link DEFAULT_LANE_CALL_BOUND_MS}.
   */
  callBoundMs?: number;
  /**
   * Called once for each call that overran {@link callBoundMs}, with the name it was run under
   * (the laned method, e.g. `jobPruneFinished`; `undefined` when none was given), when the lane
   * moves on. For a log line.
   */
  onOverrun?: (name: string | undefined, boundMs: number) => void;
  /**
   * Starts a timer that calls `fire` after `ms` milliseconds and returns its cancel. Default:
   * `setTimeout` (unreferenced: it never keeps the process alive). For tests.
   */
  timer?: (fire: () => void, ms: number) => () => void;
}

/** The default {@link LaneOptions.timer}. */
function realTimer(fire: () => void, ms: number): () => void {
  const handle = setTimeout(fire, ms);
  handle.unref?.();
  return () => clearTimeout(handle);
}

/** Runs calls one at a time in the order they were made. See the module comment. */
export class Lane {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;
  /** Bumped by {@link drop}: a call made before it and not yet started does not start. */
  private generation = 0;
  private readonly boundMs: number;
  private readonly timer: (fire: () => void, ms: number) => () => void;
  private readonly onOverrun: ((name: string | undefined, boundMs: number) => void) | undefined;

  /**
   * @param options The per-call bound (milliseconds), its report and its timer.
   * @throws RangeError when `callBoundMs` is not a positive number (or `Infinity`).
   */
  constructor(options: LaneOptions = {}) {
    const bound = options.callBoundMs ?? DEFAULT_LANE_CALL_BOUND_MS;
    if (!(bound > 0)) throw new RangeError(`callBoundMs must be positive, got ${bound}`);
    this.boundMs = bound;
    this.timer = options.timer ?? realTimer;
    this.onOverrun = options.onOverrun;
  }

  /** Calls made and not yet settled (the one running included, and any that overran). */
  get pending(): number {
    return this.queued;
  }

  /**
   * Runs `call` once every call made before it has settled or overrun its bound
   * ({@link LaneOptions.callBoundMs}); resolves or rejects as it does, however long it takes. A
   * failed call does not hold up the next one; nor does one past its bound.
   * @param name What the call is, for {@link LaneOptions.onOverrun}.
   * @throws {@link LaneDroppedError} when {@link drop} was called while it waited (it never ran).
   */
  run<T>(call: () => Promise<T>, name?: string): Promise<T> {
    this.queued += 1;
    const generation = this.generation;
    // The lane's turn of this call: over when the call settles or its bound passes.
    let endTurn: () => void = () => undefined;
    const turn = new Promise<void>((resolve) => {
      endTurn = resolve;
    });
    const result = this.tail
      .then(() => {
        if (generation !== this.generation) throw new LaneDroppedError();
        const cancel =
          this.boundMs === Number.POSITIVE_INFINITY
            ? undefined
            : this.timer(() => {
                endTurn();
                this.onOverrun?.(name, this.boundMs);
              }, this.boundMs);
        let running: Promise<T>;
        try {
          running = call();
        } catch (err) {
          cancel?.();
          throw err;
        }
        return cancel ? running.finally(cancel) : running;
      })
      .finally(() => {
        this.queued -= 1;
        endTurn();
      });
    this.tail = turn;
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

/** The member names whose objects a {@link laned} view lanes in turn. */
export type LanedStoreKey = "admin" | "flows" | "submissions";

/** The stores of a backend reached as members (contract: backend.ts): their calls are laned too. */
const NESTED_STORES: ReadonlySet<PropertyKey> = new Set<LanedStoreKey>([
  "admin",
  "flows",
  "submissions",
]);

/** Whether `F` is a function (an optional member's `undefined` aside). */
type IsFunction<F> = NonNullable<F> extends (...args: never[]) => unknown ? true : false;

/** Whether `F` is a function that returns a promise (an optional member's `undefined` aside). */
type ReturnsPromise<F> =
  NonNullable<F> extends (...args: never[]) => PromiseLike<unknown> ? true : false;

/**
 * What a laned object offers: its promise-returning methods (each call laned) and its other
 * members as they are. A synchronous method is left out — through the view it would return a
 * promise of its result, not the result — so calling one is a compile error.
 */
export type LanedMethods<T> = {
  [K in keyof T as IsFunction<T[K]> extends true
    ? ReturnsPromise<T[K]> extends true
      ? K
      : never
    : K]: T[K];
};

/**
 * The type of `laned(store, lane)`: {@link LanedMethods} of `store`, with the members named in
 * {@link LanedStoreKey} laned the same way. A `T` with no synchronous method (outside the members
 * the view returns as they are) is assignable to it, so code that accepts a laned view accepts
 * the store itself.
 */
export type Laned<T> = {
  [K in keyof LanedMethods<T>]: K extends LanedStoreKey
    ? NonNullable<LanedMethods<T>[K]> extends object
      ? LanedMethods<NonNullable<LanedMethods<T>[K]>> | Extract<LanedMethods<T>[K], undefined>
      : LanedMethods<T>[K]
    : LanedMethods<T>[K];
};

/**
 * A view of `store` whose method calls run in `lane` (each one queued under its method's name,
 * then called on `store` itself); the members named `admin`, `flows` and `submissions` are such
 * views in turn. Other members (the notifier, the hand-off desk, `kind`) are `store`'s own. Only
 * the promise-returning methods are typed ({@link Laned}): a synchronous one, called through the
 * view, would return a promise of its result.
 */
export function laned<T extends object>(store: T, lane: Lane): Laned<T> {
  return view(store, lane, NESTED_STORES) as unknown as Laned<T>;
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
        const name = String(key);
        member = (...args: unknown[]) =>
          lane.run(() => Promise.resolve(Reflect.apply(value, target, args)), name);
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
