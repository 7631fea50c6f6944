/** Polls `check` every 20 ms until it returns a truthy value or `timeoutMs` passes (then throws). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
