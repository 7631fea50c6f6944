/**
 * `soniq/dashboard/express`: mounts the dashboard in an express app (4 or 5) —
 * `app.use("/admin/jobs", requireAdmin, toExpress(dashboard))` with the same `basePath`. Needs no
 * express at run time: it only speaks Node's `http` types.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DashboardHandler } from "../handler.js";
import { sendResponse, toRequest } from "./node.js";

/** An express middleware: the request as express hands it (`originalUrl`, maybe a parsed `body`). */
export type ExpressMiddleware = (
  req: IncomingMessage & { originalUrl?: string; body?: unknown; _body?: boolean },
  res: ServerResponse,
  next: (err?: unknown) => void,
) => void;

/** The dashboard as express middleware. */
export function toExpress(dashboard: DashboardHandler): ExpressMiddleware {
  return (req, res, next) => {
    // A body parser that ran (express.json(): `_body`, and the stream is read) leaves only
    // `req.body`, even when it is `{}`; one that skipped a request (another content type) may set
    // `{}` without reading the stream, which the dashboard then reads itself.
    const consumed = req._body === true || req.readableEnded;
    const parsed =
      req.body !== undefined &&
      typeof req.body === "object" &&
      (consumed || Object.keys(req.body as object).length > 0);
    dashboard(toRequest(req, req.originalUrl, parsed ? req.body : undefined))
      .then((response) => sendResponse(response, res))
      .catch(next);
  };
}
