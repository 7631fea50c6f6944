/**
 * `soniq dashboard`: serves the dashboard on its own HTTP server. Loopback by default; binding any
 * other address requires `SONIQ_DASHBOARD_USER` and `SONIQ_DASHBOARD_PASSWORD` (Basic auth), else
 * exit 2. Read-only unless `--allow-writes`. Without credentials it answers only loopback `Host`
 * values and `--allowed-hosts` (DNS rebinding). SIGTERM / SIGINT close the server and exit 0.
 */
import { createServer } from "node:http";
import { isIP } from "node:net";
import type { Command } from "commander";
import { sendResponse, toRequest } from "../../dashboard/adapters/node.js";
import { basicAuth } from "../../dashboard/basic-auth.js";
import { createDashboard } from "../../dashboard/handler.js";
import { SoniqError } from "../../errors.js";
import {
  type ConnectionFlags,
  connection,
  number,
  openInstance,
  runCommand,
  withDatabaseUrl,
  withModule,
} from "../runner.js";

interface DashboardFlags extends ConnectionFlags {
  port: number;
  host: string;
  basePath: string;
  allowWrites?: boolean;
  allowedHosts?: string[];
  stackTraces?: boolean;
}

/** `--allowed-hosts a,b`: the comma-separated hosts, accumulated over repeats. */
function hostList(value: string, previous: string[] | undefined): string[] {
  const hosts = value
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  return [...(previous ?? []), ...hosts];
}

/** True for an address only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  if (host === "localhost" || host === "::1" || host === "[::1]") return true;
  return isIP(host) === 4 && host.startsWith("127.");
}

/** The Basic-auth credentials from the environment, or null when neither is set. */
export function credentialsFromEnv(
  env: NodeJS.ProcessEnv,
): { user: string; password: string } | null {
  const user = env.SONIQ_DASHBOARD_USER ?? "";
  const password = env.SONIQ_DASHBOARD_PASSWORD ?? "";
  if (user === "" && password === "") return null;
  if (user === "" || password === "") {
    throw new SoniqError(
      "INVALID_OPTION",
      "set both SONIQ_DASHBOARD_USER and SONIQ_DASHBOARD_PASSWORD",
    );
  }
  return { user, password };
}

/**
 * Adds `dashboard [module] [--port] [--host] [--base-path] [--allow-writes] [--allowed-hosts]
 * [--stack-traces]` to `program`.
 */
export function register(program: Command): void {
  const command = program
    .command("dashboard")
    .description(
      "Serve the dashboard. Loopback only unless SONIQ_DASHBOARD_USER/SONIQ_DASHBOARD_PASSWORD are set; read-only unless --allow-writes.",
    )
    .argument("[module]", "your module exporting the Soniq instance (for its settings)")
    .option("--port <n>", "TCP port", number("port"), 6161)
    .option(
      "--host <host>",
      "address to bind; anything but loopback requires credentials",
      "127.0.0.1",
    )
    .option("--base-path <path>", "serve under this path, e.g. /admin/jobs", "/")
    .option("--allow-writes", "let the signed-in user cancel, retry, replay, delete and pause")
    .option(
      "--allowed-hosts <hosts>",
      "Host header values to answer besides loopback names, comma-separated (e.g. jobs.internal:6161); without credentials every other Host is refused (DNS rebinding)",
      hostList,
    )
    .option("--stack-traces", "show the stack frames of error texts (paths relative to the cwd)");
  withModule(withDatabaseUrl(command)).action((module: string | undefined, flags: DashboardFlags) =>
    runCommand(async () => {
      const credentials = credentialsFromEnv(process.env);
      if (!isLoopback(flags.host) && !credentials) {
        throw new SoniqError(
          "INVALID_OPTION",
          `binding ${flags.host} exposes the dashboard beyond this machine: set SONIQ_DASHBOARD_USER and SONIQ_DASHBOARD_PASSWORD`,
        );
      }
      if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) {
        throw new SoniqError("INVALID_OPTION", "--port must be 0–65535");
      }
      const soniq = await openInstance(connection(module, flags));
      const dashboard = createDashboard({
        soniq,
        basePath: flags.basePath,
        auth: credentials ? basicAuth(credentials) : "none",
        access: flags.allowWrites ? "all" : "read-only",
        ...(flags.allowedHosts ? { allowedHosts: flags.allowedHosts } : {}),
        stackTraces: flags.stackTraces === true,
      });
      const server = createServer((req, res) => {
        dashboard(toRequest(req))
          .then((response) => sendResponse(response, res))
          .catch((err: unknown) => {
            soniq.logger.error({ err }, "dashboard response failed");
            res.destroy();
          });
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(flags.port, flags.host, () => resolve());
      });
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : flags.port;
      const host = flags.host.includes(":") ? `[${flags.host}]` : flags.host;
      process.stdout.write(
        `soniq dashboard on http://${host}:${port}${dashboard.basePath}/ (${flags.allowWrites ? "writes allowed" : "read-only"}${credentials ? ", Basic auth" : ""})\n`,
      );
      const stop = () => {
        server.closeAllConnections();
        server.close(() => {
          void soniq.close().then(() => process.exit(0));
        });
      };
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    }),
  );
}
