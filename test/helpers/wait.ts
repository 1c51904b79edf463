/** Waits until the clock has passed `timestamp`, so the next write gets a later one. */
export async function afterMillisecond(timestamp: string): Promise<void> {
  while (Date.now() <= Date.parse(timestamp)) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** Polls `check` every 50 ms until it returns true, or gives up after `timeoutMs` (the caller's assertion then fails). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
