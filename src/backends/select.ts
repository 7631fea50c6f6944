import { SoniqError } from "../errors.js";
import type { Backend, BackendKind } from "./contract/index.js";

/** Where a database URL points, as decided by {@link parseDatabaseUrl}. */
export type DatabaseTarget =
  | { kind: "postgres"; connectionString: string }
  | { kind: "sqlite"; path: string }
  | { kind: "memory" };

/**
 * Picks the backend from a database URL:
 * `postgres://…` / `postgresql://…` → PostgreSQL; `sqlite:PATH` or a path ending `.db` /
 * `.sqlite` / `.sqlite3` → a SQLite file; `memory:` → in-memory.
 * @throws SoniqError `INVALID_DATABASE_URL` for anything else.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { kind: "postgres", connectionString: trimmed };
  if (/^memory:/i.test(trimmed)) return { kind: "memory" };
  if (/^sqlite:/i.test(trimmed)) {
    const path = trimmed.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (path.length === 0) {
      throw new SoniqError(
        "INVALID_DATABASE_URL",
        "`sqlite:` needs a file path, e.g. sqlite:./soniq.db",
      );
    }
    return { kind: "sqlite", path };
  }
  if (/\.(db|sqlite|sqlite3)$/i.test(trimmed) && !trimmed.includes("://")) {
    return { kind: "sqlite", path: trimmed };
  }
  throw new SoniqError(
    "INVALID_DATABASE_URL",
    `cannot tell the backend from ${JSON.stringify(redactUrl(trimmed))}: use postgres://…, sqlite:PATH, a path ending .db/.sqlite, or memory:`,
  );
}

/** The URL with any password replaced by `***`, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, "$1***@");
}

/** Options of {@link createBackend}. */
export interface CreateBackendOptions {
  /** The database URL (see {@link parseDatabaseUrl}). */
  databaseUrl: string;
  /** PostgreSQL schema holding Soniq's tables (ignored by the other backends). */
  schema: string;
  /** PostgreSQL pool size (ignored by the other backends). */
  poolSize: number;
  /** PostgreSQL only: see `PostgresBackendOptions.pooler` (default `"none"`). */
  pooler?: "none" | "transaction";
  /** PostgreSQL only: see `PostgresBackendOptions.listenUrl`; `null` or absent = its default. */
  listenUrl?: string | null;
  /** SQLite busy timeout in milliseconds (ignored by the other backends). */
  busyTimeoutMs?: number;
  /** PostgreSQL only: see `PostgresBackendOptions.onListenChange`. */
  onListenChange?: (change: "lost" | "restored", channel: string, error?: unknown) => void;
}

/**
 * Creates the backend a database URL names. The PostgreSQL and SQLite drivers are loaded only
 * when used.
 * @throws SoniqError `INVALID_DATABASE_URL`; `INVALID_OPTION` from the PostgreSQL backend's
 * options (`pooler`, `listenUrl`, …).
 */
export async function createBackend(options: CreateBackendOptions): Promise<Backend> {
  const target = parseDatabaseUrl(options.databaseUrl);
  switch (target.kind) {
    case "memory": {
      const { MemoryBackend } = await import("./memory/memory-backend.js");
      return new MemoryBackend();
    }
    case "sqlite": {
      const { SqliteBackend } = await import("./sqlite/sqlite-backend.js");
      return new SqliteBackend({
        path: target.path,
        ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
      });
    }
    case "postgres": {
      const { PostgresBackend } = await import("./postgres/postgres-backend.js");
      return new PostgresBackend({
        connectionString: target.connectionString,
        schema: options.schema,
        poolSize: options.poolSize,
        ...(options.pooler === undefined ? {} : { pooler: options.pooler }),
        ...(options.listenUrl == null ? {} : { listenUrl: options.listenUrl }),
        ...(options.onListenChange ? { onListenChange: options.onListenChange } : {}),
      });
    }
  }
}

export type { BackendKind };
