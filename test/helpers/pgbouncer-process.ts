/**
 * Starting Debian's PgBouncer in transaction mode in front of a PostgreSQL database, with no test
 * framework attached: the test suites (pgbouncer.ts, pgbouncer-global.ts) and the chaos harness
 * (`npm run chaos -- --pgbouncer`) use it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Where Debian's package puts the binary (override: `PGBOUNCER_BIN`). */
export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";

/** A running PgBouncer. */
export interface PgBouncer {
  /** `postgres://…` URL of the test database through the pooler. */
  url: string;
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and waits for its exit. */
  stop(): Promise<void>;
  /** Sends it a signal (SIGSTOP / SIGCONT: a pooler that stops answering, then answers again). */
  kill(signal: NodeJS.Signals): void;
}

/** A TCP port nobody listens on right now (the kernel's pick). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Options of {@link startPgBouncer}. */
export interface PgBouncerOptions {
  /** The database it pools (default: `TEST_DATABASE_URL`, else postgres://postgres@127.0.0.1:5432/test). */
  target?: string;
  /** A directory for its ini file (default: a new one under the system's temporary directory). */
  dir?: string;
  /** Server connections per database/user pair (`default_pool_size`); default 8. */
  poolSize?: number;
}

/**
 * Starts PgBouncer (`pool_mode = transaction`, `auth_type = any`) on a free port of 127.0.0.1 in
 * front of the test server's `test` database, and resolves once a `SELECT 1` through it answers.
 * @throws when it exits or does not answer within 15 s (its log in the message).
 */
export async function startPgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const target = new URL(
    options.target ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  );
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "soniq-pgbouncer-"));
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    [
      "[databases]",
      `test = host=${target.hostname} port=${target.port || "5432"} dbname=${target.pathname.slice(1) || "test"} user=${decodeURIComponent(target.username) || "postgres"}`,
      "",
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = any",
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 8}`,
      "max_client_conn = 200",
      "ignore_startup_parameters = extra_float_digits,options",
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root: as root (CI containers), it drops to `PGBOUNCER_USER`
  // (default postgres, which Debian's server package creates) and must read its ini.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    chmodSync(dir, 0o755);
    chmodSync(ini, 0o644);
  }
  const args = asRoot ? ["-u", process.env.PGBOUNCER_USER ?? "postgres", ini] : [ini];
  const child: ChildProcess = spawn(PGBOUNCER_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
    if (process.env.PGBOUNCER_DEBUG) console.error(`pgbouncer exited:\n${output}`);
  });
  const url = `postgres://${encodeURIComponent(decodeURIComponent(target.username) || "postgres")}@127.0.0.1:${port}/test`;
  const kill = (signal: NodeJS.Signals) => {
    if (!gone) child.kill(signal);
  };
  const stop = async () => {
    if (gone) return;
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone) throw new Error(`pgbouncer exited at start:\n${output}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query("SELECT 1");
      return { url, port, stop, kill };
    } catch (err) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`pgbouncer on port ${port} did not answer: ${String(err)}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
