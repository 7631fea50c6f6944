// Stopping the LISTEN connection does not wait for the server to close its side: the Terminate
// message is all the server needs, and its backend's exit (10–30 ms on a busy host; here held
// for 3 s by a proxy) was on every idle worker's SIGTERM → exit path.
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { PgListener } from "../../src/backends/postgres/listener.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { describePostgres } from "../helpers/postgres-suite.js";

/** How long the proxy keeps a connection open after the client ended its side. */
const HOLD_MS = 3000;

/**
 * A TCP proxy to the test server that, once the client has ended its side (after Terminate),
 * keeps both sides open for {@link HOLD_MS}: a server slow to close the connection.
 */
async function slowClosingProxy(): Promise<{ server: Server; url: string; sockets: Socket[] }> {
  const target = new URL(TEST_DATABASE_URL);
  const sockets: Socket[] = [];
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = netConnect({
      host: target.hostname,
      port: Number(target.port || 5432),
      allowHalfOpen: true,
    });
    sockets.push(client, upstream);
    client.pipe(upstream, { end: false });
    upstream.pipe(client, { end: false });
    const onError = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", onError);
    upstream.on("error", onError);
    client.on("end", () => {
      setTimeout(() => {
        upstream.end();
        client.end();
      }, HOLD_MS).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no proxy port");
  const url = new URL(TEST_DATABASE_URL);
  url.hostname = "127.0.0.1";
  url.port = String(address.port);
  return { server, url: url.toString(), sockets };
}

describePostgres("postgres: stopping the LISTEN connection", () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it("returns once Terminate is sent, without waiting for the server to close its side", async () => {
    const proxy = await slowClosingProxy();
    cleanups.push(() => {
      for (const socket of proxy.sockets) socket.destroy();
      proxy.server.close();
    });
    const warnings: string[] = [];
    const logger = pino(
      { level: "warn" },
      {
        write: (line: string) => {
          warnings.push(line);
        },
      },
    );
    const errors: unknown[] = [];
    let listening!: () => void;
    const ready = new Promise<void>((resolve) => {
      listening = resolve;
    });
    const listener = new PgListener({
      connectionString: proxy.url,
      channel: "soniq_listener_stop_test",
      onNotify: () => undefined,
      onReconnect: () => undefined,
      onError: (err) => errors.push(err),
      logger,
    });
    await listener.start();
    const waitUntil = Date.now() + 10_000;
    const poll = setInterval(() => {
      if (listener.listening || Date.now() > waitUntil) listening();
    }, 5);
    await ready;
    clearInterval(poll);
    expect(listener.listening).toBe(true);

    const started = performance.now();
    await listener.stop();
    const ms = performance.now() - started;
    // Before: stop() waited for the server's end of the connection, here up to its 1 s bound
    // (then logged "still busy"). Now it returns once the connection was told to end.
    expect(ms).toBeLessThan(600);
    expect(listener.state).toBe("idle");
    expect(listener.listening).toBe(false);
    expect(warnings.join("")).not.toContain("still busy");
    expect(errors).toEqual([]);
  });
});
