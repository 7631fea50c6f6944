/**
 * The page's data hooks: load on mount and on demand, and refresh every few seconds while live
 * refresh is on and the tab is visible (a hidden tab asks for nothing).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/** Live refresh, shared by every page (the header's toggle). */
export const live = { on: true, listeners: new Set<() => void>() };

/** Loads `load()` now, again when `deps` change, and every `intervalMs` while live and visible. */
export function usePolled<T>(
  load: () => Promise<T>,
  deps: unknown[],
  intervalMs = 3000,
): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(() => {
    loadRef
      .current()
      .then((value) => {
        setData(value);
        setError(null);
      })
      .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)));
  }, []);
  useEffect(() => {
    reload();
    const timer = setInterval(() => {
      if (live.on && document.visibilityState === "visible") reload();
    }, intervalMs);
    const onVisible = () => {
      if (live.on && document.visibilityState === "visible") reload();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, deps);
  return { data, error, reload };
}

/** The current `location.hash` route, e.g. `#/jobs/ID` → `/jobs/ID`, with its query. */
export function useRoute(): { path: string; params: URLSearchParams } {
  const read = () => {
    const hash = location.hash.replace(/^#/, "") || "/";
    const q = hash.indexOf("?");
    return q < 0
      ? { path: hash, params: new URLSearchParams() }
      : { path: hash.slice(0, q), params: new URLSearchParams(hash.slice(q + 1)) };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onHash = () => setRoute(read());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  return route;
}
