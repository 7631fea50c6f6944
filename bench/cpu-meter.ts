/**
 * CPU per job, split by side: the worker process (`process.cpuUsage()`, microseconds) and the
 * database serving it — the PostgreSQL backends whose client socket belongs to the measured
 * process (matched by TCP port: `pg_stat_activity.client_port` against the process's own sockets
 * in /proc), or the whole Redis server — read from `/proc/<pid>/stat` (clock ticks, 10 ms each on
 * Linux, so a window needs ≥ 1 s of database work for a figure to mean much). WAL bytes come from
 * `pg_current_wal_lsn()` deltas and are server-wide: other work on the same server is counted too.
 *
 * Load on the machine changes throughput far more than CPU per job, which is why the bench and
 * the profile harness report these: a job costs about the same CPU on a busy machine, it just
 * waits longer for it (docs/performance.md, "Reading the CPU rows").
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import pg from "pg";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** utime + stime of `pid`, in microseconds; undefined when the process is gone or unreadable. */
export function procCpuMicros(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1e6) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** This process's CPU (user + system), in microseconds. */
export function selfCpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Local TCP ports of the sockets `pid` holds open (IPv4 and IPv6). Empty when unreadable. */
export function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m?.[1]) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1];
      const inode = cols[9];
      if (!local || !inode || !inodes.has(inode)) continue;
      ports.add(Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16));
    }
  }
  return ports;
}

/** A reading of the database side, to subtract from a later one. */
export interface DatabaseReading {
  /** CPU of each server process serving the measured process, in microseconds, by pid. */
  cpu: Map<number, number>;
  /** `pg_current_wal_lsn()` as a byte position (PostgreSQL only). */
  walBytes?: number;
}

/** The database side's CPU and WAL between two readings. */
export interface DatabaseUsage {
  /** CPU of the server processes, in microseconds (processes first seen at the end count from 0). */
  cpuMicros: number;
  /** Server processes counted. */
  processes: number;
  /** WAL written meanwhile, in bytes (server-wide). */
  walBytes?: number;
}

/** Reads the CPU of a PostgreSQL server's backends that serve process `pid`. */
export class PostgresCpu {
  private client: pg.Client | undefined;
  private ownBackend = 0;

  constructor(
    private readonly url: string,
    private readonly pid: number = process.pid,
  ) {}

  /** A reading now (connects on first use; this meter's own backend is left out). */
  async read(): Promise<DatabaseReading> {
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.url });
      await client.connect();
      this.client = client;
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      this.ownBackend = rows[0]?.pid ?? 0;
    }
    const { rows } = await this.client.query<{ pid: number; port: number | null; lsn: string }>(
      `SELECT pid, client_port AS port,
              pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn
         FROM pg_stat_activity WHERE client_port IS NOT NULL`,
    );
    const ports = localPortsOf(this.pid);
    const cpu = new Map<number, number>();
    for (const row of rows) {
      if (row.pid === this.ownBackend || row.port === null || !ports.has(row.port)) continue;
      const micros = procCpuMicros(row.pid);
      if (micros !== undefined) cpu.set(row.pid, micros);
    }
    const lsn = rows[0]?.lsn;
    return { cpu, walBytes: lsn === undefined ? undefined : Number(lsn) };
  }

  /** Closes the meter's connection. */
  async close(): Promise<void> {
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }
}

/** What a process-level reading of one server process (Redis) looks like. */
export function readProcess(pid: number): DatabaseReading {
  const micros = procCpuMicros(pid);
  return { cpu: new Map(micros === undefined ? [] : [[pid, micros]]) };
}

/** The usage between two readings. */
export function usageBetween(before: DatabaseReading, after: DatabaseReading): DatabaseUsage {
  let cpuMicros = 0;
  for (const [pid, micros] of after.cpu) cpuMicros += micros - (before.cpu.get(pid) ?? 0);
  const usage: DatabaseUsage = { cpuMicros, processes: after.cpu.size };
  if (before.walBytes !== undefined && after.walBytes !== undefined) {
    usage.walBytes = after.walBytes - before.walBytes;
  }
  return usage;
}

/** The Redis server's process id (`INFO server`), or undefined when it cannot be asked. */
export async function redisServerPid(url: string): Promise<number | undefined> {
  const { Redis } = await import("ioredis");
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    const info = await redis.info("server");
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    return Number.isFinite(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}
