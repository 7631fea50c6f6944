/** A tiny local HTTP receiver for `report.post` jobs: counts the reports it gets. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Receiver {
  url: string;
  reports: unknown[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const reports: unknown[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/report") {
      res.writeHead(404).end();
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
      if (body.length > 64 * 1024) req.destroy();
    });
    req.on("end", () => {
      try {
        reports.push(JSON.parse(body));
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/report`,
    reports,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
