/**
 * The page's client of the dashboard's HTTP API: relative URLs (the page is served at
 * `<basePath>/`), JSON in and out, the CSRF token on every write, errors as `ApiError`. Every
 * string of every response shows its bidirectional-control characters as escapes (`\u202E`), so
 * data cannot reorder what the page displays (admin/visible-text.ts).
 */
import { visibleText } from "../../admin/visible-text.js";

/** What `GET api/me` says about the session. */
export interface Me {
  user: string;
  actions: string[];
  csrfToken: string;
  hideArgs: boolean;
  maxPreviewBytes: number;
}

/** A refused or failed API call. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = "";

/** Remembers the session's CSRF token for writes. */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Calls the API: `path` is relative (`api/jobs?…`). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET") {
    headers["x-soniq-csrf"] = csrfToken;
    headers["content-type"] = "application/json";
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text().catch(() => "");
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text, (_key, value: unknown) =>
      typeof value === "string" ? visibleText(value) : value,
    );
  } catch {
    parsed = null;
  }
  const data = parsed as (T & { error?: { code: string; message: string } }) | null;
  if (!response.ok) {
    const error = data?.error ?? { code: `HTTP_${response.status}`, message: response.statusText };
    throw new ApiError(response.status, error.code, error.message);
  }
  return data as T;
}

/** A query string from an object (empty values left out). */
export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : "";
}
