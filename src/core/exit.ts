// Exiting while a native add-on's asynchronous work is under way in a worker thread can kill the
// process instead: onnxruntime-node throws a C++ exception when a session it was creating
// completes in a thread being torn down, and the process dies of SIGABRT ("terminate called after
// throwing an instance of 'Napi::Error'") rather than exiting with its code. A `cairn serve` whose
// store failed to open while the model loaded did so about one time in twenty-five. Whatever runs
// such work says here how to wait for it, and the command line exits once it has finished.

/** Long enough for the bundled model's load; a download still under way is cut short after it. */
const SETTLE_LIMIT_MS = 10_000;

const settlers = new Set<() => Promise<void>>();

/** Registers work the process waits for before it exits (never longer than the limit). */
export function settleBeforeExit(settle: () => Promise<void>): void {
  settlers.add(settle);
}

/** Exits with `code` once every registered settler has finished, or the limit has passed. */
export async function exitWhenSettled(code: number, limitMs = SETTLE_LIMIT_MS): Promise<never> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, limitMs);
  });
  await Promise.race([Promise.allSettled([...settlers].map((settle) => settle())), limit]);
  clearTimeout(timer);
  process.exit(code);
}
