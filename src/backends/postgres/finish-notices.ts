/**
 * PostgreSQL's finish notices (contract/finish-notices.ts; migration 021): a wait stores a row in
 * `soniq_job_waits` while holding the live job row FOR KEY SHARE, and the trigger on
 * `soniq_jobs` deletes that row and NOTIFYs `!done <id>` on the schema's channel in the
 * transaction that takes the job out of the live table. The notice arrives over the instance's
 * one LISTEN connection (notifier.ts; `listenUrl` behind a transaction-mode pooler): a thousand
 * waits in one process share it, and none of them reads anything until its job finishes. Without
 * a LISTEN connection (a pooler and no `listenUrl`) every watch is not live, and waits read at
 * an interval.
 */
import { randomUUID } from "node:crypto";
import { isSoniqError } from "../../errors.js";
import type { FinishNotices, FinishWatch } from "../contract/index.js";
import { isUuid, quoteIdent } from "./identifiers.js";

/** The payload prefix of a finish notice (the job id follows). */
export const FINISH_NOTIFY_PREFIX = "!done ";

/** What {@link PgFinishNotices} needs from its backend. */
export interface PgFinishNoticesHost {
  /** The validated schema. */
  schema: string;
  /** Runs one statement on the pool. */
  run(text: string, values: unknown[]): Promise<{ rowCount: number }>;
  /** Opens the LISTEN connection if not yet open; false when there is none (polling only). */
  openListen(): boolean;
  /** Whether LISTEN is in place right now. */
  listening(): boolean;
}

/** A watch's state. */
interface Entry {
  onNotice: () => void;
}

/** See the module comment. */
export class PgFinishNotices implements FinishNotices {
  private readonly watches = new Map<string, Set<Entry>>();
  /** Names this instance's waits (`<instance>:<n>`), so each wait has a row of its own. */
  private readonly instance = randomUUID();
  private count = 0;
  private readonly registerSql: string;
  private readonly releaseSql: string;

  constructor(private readonly host: PgFinishNoticesHost) {
    const s = quoteIdent(host.schema);
    this.registerSql = `INSERT INTO ${s}.soniq_job_waits (job_id, waiter)
      SELECT j.id, $2 FROM ${s}.soniq_jobs AS j WHERE j.id = $1 FOR KEY SHARE OF j
      ON CONFLICT DO NOTHING`;
    this.releaseSql = `DELETE FROM ${s}.soniq_job_waits WHERE job_id = $1 AND waiter = $2`;
  }

  /** Number of watches registered now (tests: every wait releases its watch). */
  get size(): number {
    let n = 0;
    for (const set of this.watches.values()) n += set.size;
    return n;
  }

  /**
   * See {@link FinishNotices.watch}. A watch is live only when its row was stored (the job was
   * live at registration) and LISTEN is in place; an id that is not a uuid, a schema without
   * migration 021, or no LISTEN connection give a watch that is never live (the waiter reads at
   * an interval).
   * @throws the pool's errors other than `SCHEMA_NOT_READY`.
   */
  async watch(id: string, onNotice: () => void): Promise<FinishWatch> {
    if (!isUuid(id) || !this.host.openListen()) return notLive;
    const entry: Entry = { onNotice };
    let set = this.watches.get(id);
    if (!set) {
      set = new Set();
      this.watches.set(id, set);
    }
    set.add(entry);
    const drop = () => {
      const current = this.watches.get(id);
      current?.delete(entry);
      if (current?.size === 0) this.watches.delete(id);
    };
    this.count += 1;
    const waiter = `${this.instance}:${this.count}`;
    let stored: boolean;
    try {
      stored = (await this.host.run(this.registerSql, [id, waiter])).rowCount > 0;
    } catch (err) {
      drop();
      if (isSoniqError(err, "SCHEMA_NOT_READY")) return notLive; // before migration 021
      throw err;
    }
    const host = this.host;
    let released = false;
    return {
      get live() {
        return stored && !released && host.listening();
      },
      release: async () => {
        if (released) return;
        released = true;
        drop();
        if (stored) await host.run(this.releaseSql, [id, waiter]).catch(() => undefined);
      },
    };
  }

  /** Routes a notification payload; true when it was a finish notice. */
  handleNotify(payload: string): boolean {
    if (!payload.startsWith(FINISH_NOTIFY_PREFIX)) return false;
    this.notify(this.watches.get(payload.slice(FINISH_NOTIFY_PREFIX.length)));
    return true;
  }

  /**
   * LISTEN is (again) in place — a notice may have been missed — or was lost (the watches are no
   * longer live, their waiters go back to reading at an interval): every watch reads.
   */
  recheck(): void {
    for (const set of this.watches.values()) this.notify(set);
  }

  private notify(set: Set<Entry> | undefined): void {
    for (const entry of set ?? []) queueMicrotask(() => entry.onNotice());
  }
}

/** A watch that never hears anything: the waiter reads at an interval. */
const notLive: FinishWatch = { live: false, release: async () => undefined };
