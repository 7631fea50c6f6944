/**
 * The health server: a {@link healthHandler} on its own `node:http` server, as a
 * {@link BaseService}: `start()` listens (and rejects when the port cannot be bound), `stop()`
 * closes the listener and every open connection, bounded.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { BaseService } from "../../lifecycle/service.js";
import type { Logger } from "../logger.js";
import type { HealthHandler } from "./health-handler.js";

/** Options of {@link HealthServer}. */
export interface HealthServerOptions {
  handler: HealthHandler;
  /** TCP port; 0 picks a free one (read it from {@link HealthServer.port}). */
  port: number;
  /** Interface to bind. Default `0.0.0.0` (probes come from the node's kubelet). */
  host?: string;
  logger: Logger;
}

/** See the module comment. */
export class HealthServer extends BaseService {
  private server: Server | undefined;
  private bound: number | undefined;

  constructor(private readonly options: HealthServerOptions) {
    super({ name: "health-server", logger: options.logger, stopBoundMs: 2000 });
  }

  /** The bound port once started. */
  get port(): number | undefined {
    return this.bound;
  }

  /** Listens; rejects with the listen error (e.g. `EADDRINUSE`). */
  protected override onStart(): Promise<void> {
    const server = createServer(this.options.handler);
    server.keepAliveTimeout = 5000;
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host ?? "0.0.0.0", () => {
        server.off("error", reject);
        this.bound = (server.address() as AddressInfo).port;
        this.logger.info(
          { port: this.bound, host: this.options.host ?? "0.0.0.0" },
          "health server listening: /livez /readyz /metrics",
        );
        resolve();
      });
    });
  }

  protected run(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  protected override async onStopped(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
